package io.gpudirect.server;

import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.attribute.BasicFileAttributes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code fstat} of an open file channel: the attributes of the very inode it reads, whatever its
 * name holds now. Java 17 offers no public {@code fstat} beyond {@link FileChannel#size}, so this
 * reaches the JDK's own (the descriptor of {@code sun.nio.ch.FileChannelImpl} and
 * {@code sun.nio.fs.UnixFileAttributes.get(int)}); that needs {@code --add-opens} of
 * {@code java.base/sun.nio.ch}, {@code java.io} and {@code sun.nio.fs}, which {@code bin/gpudirect},
 * the server package and the build give. Without them (another launcher, another JDK) it is
 * {@link #available() unavailable}, logged once, and callers walk the path instead.
 */
final class DescriptorAttributes {
  private static final Logger LOG = LoggerFactory.getLogger(DescriptorAttributes.class);
  private static final Class<?> CHANNEL_IMPL;
  private static final VarHandle CHANNEL_FD;
  private static final VarHandle DESCRIPTOR_INT;
  private static final MethodHandle FSTAT;

  static {
    Class<?> channelImpl = null;
    VarHandle channelFd = null;
    VarHandle descriptorInt = null;
    MethodHandle fstat = null;
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      channelImpl = Class.forName("sun.nio.ch.FileChannelImpl");
      channelFd = MethodHandles.privateLookupIn(channelImpl, lookup)
          .findVarHandle(channelImpl, "fd", FileDescriptor.class);
      descriptorInt = MethodHandles.privateLookupIn(FileDescriptor.class, lookup)
          .findVarHandle(FileDescriptor.class, "fd", int.class);
      Class<?> unixAttributes = Class.forName("sun.nio.fs.UnixFileAttributes");
      fstat = MethodHandles.privateLookupIn(unixAttributes, lookup)
          .findStatic(unixAttributes, "get", MethodType.methodType(unixAttributes, int.class))
          .asType(MethodType.methodType(BasicFileAttributes.class, int.class));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.info("No fstat of open files in this JVM ({}): a file read is checked for changes by"
          + " walking its path again. bin/gpudirect opens java.base/sun.nio.fs, sun.nio.ch and"
          + " java.io to the server for this", e.toString());
      channelImpl = null;
      channelFd = null;
      descriptorInt = null;
      fstat = null;
    }
    CHANNEL_IMPL = channelImpl;
    CHANNEL_FD = channelFd;
    DESCRIPTOR_INT = descriptorInt;
    FSTAT = fstat;
  }

  private DescriptorAttributes() {}

  static boolean available() {
    return FSTAT != null;
  }

  /**
   * The attributes of the file {@code channel} has open, by {@code fstat} of its descriptor;
   * null when {@link #available() unavailable} or the channel is not the JDK's file channel.
   */
  static BasicFileAttributes of(FileChannel channel) throws IOException {
    if (FSTAT == null || channel.getClass() != CHANNEL_IMPL) {
      return null;
    }
    FileDescriptor descriptor = (FileDescriptor) CHANNEL_FD.get(channel);
    int fd = (int) DESCRIPTOR_INT.get(descriptor);
    if (fd < 0) {
      throw new IOException("the file's channel is closed");
    }
    try {
      return (BasicFileAttributes) FSTAT.invokeExact(fd);
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      // sun.nio.fs.UnixException: errno of fstat, checked but not an IOException.
      throw new IOException("fstat of descriptor " + fd + " failed: " + e.getMessage(), e);
    }
  }
}
