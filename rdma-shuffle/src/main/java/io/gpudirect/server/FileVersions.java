package io.gpudirect.server;

import io.gpudirect.protocol.FileVersion;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link FileVersion} one stat of a file gives: identity, size, modification time and change
 * time. {@link BasicFileAttributes} hides the change time ({@code st_ctim}), but on Linux the
 * attributes every stat of the server returns (the walk's {@code fstatat}, {@code fstat} of a
 * descriptor) are the JDK's Unix attributes, which keep it to the nanosecond; it is read from
 * them, as {@link DescriptorAttributes} reaches the JDK's {@code fstat}, which needs the same
 * {@code --add-opens java.base/sun.nio.fs} ({@code bin/gpudirect}, the server package and the
 * build give it). Without it the change time is {@link FileVersion#CHANGE_TIME_UNKNOWN}, said
 * once in the log: a writer who puts the modification time back is then not seen.
 *
 * <p>A second stat by path ({@code Files.readAttributes(path, "unix:ctime")}) would read it
 * without the JDK's internals, but from a second lookup from the root, which the walk exists to
 * avoid (see {@link RootDirectory}), and at twice the system calls per READ.
 */
final class FileVersions {
  private static final Logger LOG = LoggerFactory.getLogger(FileVersions.class);
  /** {@code UnixFileAttributes.toUnixFileAttributes}: (BasicFileAttributes) Object, or null. */
  private static final MethodHandle UNIX;
  /** The change time's seconds and nanoseconds of a {@code UnixFileAttributes}: (Object) long. */
  private static final MethodHandle CHANGED_SECONDS;
  private static final MethodHandle CHANGED_NANOS;
  /** Seconds whose nanoseconds no longer fit a long: saturated, as FileTime saturates. */
  private static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000L;

  static {
    MethodHandle unix = null;
    MethodHandle seconds = null;
    MethodHandle nanos = null;
    try {
      Class<?> attributes = Class.forName("sun.nio.fs.UnixFileAttributes");
      MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(attributes, MethodHandles.lookup());
      unix = lookup.findStatic(attributes, "toUnixFileAttributes",
              MethodType.methodType(attributes, BasicFileAttributes.class))
          .asType(MethodType.methodType(Object.class, BasicFileAttributes.class));
      seconds = lookup.findGetter(attributes, "st_ctime_sec", long.class)
          .asType(MethodType.methodType(long.class, Object.class));
      nanos = lookup.findGetter(attributes, "st_ctime_nsec", long.class)
          .asType(MethodType.methodType(long.class, Object.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("File versions on this server cannot include the change time (ctime) ({}): a"
          + " writer who rewrites a file in place and puts its modification time back is not"
          + " seen, and a reader may get bytes of two versions. bin/gpudirect and the server"
          + " package open java.base/sun.nio.fs to the server for this; elsewhere add"
          + " --add-opens=java.base/sun.nio.fs=ALL-UNNAMED", e.toString());
      unix = null;
      seconds = null;
      nanos = null;
    }
    UNIX = unix;
    CHANGED_SECONDS = seconds;
    CHANGED_NANOS = nanos;
  }

  private FileVersions() {}

  /** Whether this JVM lets the server read change times. */
  static boolean available() {
    return UNIX != null;
  }

  /** The version of the file whose stat gave {@code a}. */
  static FileVersion of(BasicFileAttributes a) {
    Object key = a.fileKey();
    return new FileVersion(key == null ? "" : key.toString(), a.size(),
        a.lastModifiedTime().to(TimeUnit.NANOSECONDS), changedNanos(a));
  }

  /**
   * Whether two stats of one file (same file key: the caller knows) give one version: same size,
   * modification and change times. Makes no text, unlike comparing {@link #of} both.
   */
  static boolean sameVersion(BasicFileAttributes before, BasicFileAttributes now) {
    return now.size() == before.size()
        && now.lastModifiedTime().equals(before.lastModifiedTime())
        && changedNanos(now) == changedNanos(before);
  }

  /**
   * Whether {@code a}, a stat of the file whose key's text is {@code fileId}, is version
   * {@code v}; makes no text.
   */
  static boolean isVersion(FileVersion v, String fileId, BasicFileAttributes a) {
    return v.size() == a.size()
        && v.modifiedNanos() == a.lastModifiedTime().to(TimeUnit.NANOSECONDS)
        && v.changedNanos() == changedNanos(a)
        && v.fileId().equals(fileId);
  }

  /**
   * The change time of the stat {@code a} in nanoseconds since the epoch, or
   * {@link FileVersion#CHANGE_TIME_UNKNOWN} where it cannot be read.
   */
  static long changedNanos(BasicFileAttributes a) {
    if (UNIX == null) {
      return FileVersion.CHANGE_TIME_UNKNOWN;
    }
    long seconds;
    long nanos;
    try {
      Object unix = (Object) UNIX.invokeExact(a);
      if (unix == null) {
        return FileVersion.CHANGE_TIME_UNKNOWN;
      }
      seconds = (long) CHANGED_SECONDS.invokeExact(unix);
      nanos = (long) CHANGED_NANOS.invokeExact(unix);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      // A field getter and a cast throw nothing checked.
      throw new IllegalStateException("Cannot read the change time of a file: " + e, e);
    }
    if (seconds >= MAX_SECONDS) {
      return Long.MAX_VALUE;
    }
    if (seconds <= -MAX_SECONDS) {
      // Long.MIN_VALUE says "unknown".
      return Long.MIN_VALUE + 1;
    }
    return seconds * 1_000_000_000L + nanos;
  }
}
