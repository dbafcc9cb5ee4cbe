package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.server.RootDirectory.FoundFile;
import java.io.IOException;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The checks every READ passes, whatever carries it: length limit, path, file, version, range;
 * and, once its bytes are read or sent, that the file read did not change meanwhile.
 */
final class FileRanges {
  private FileRanges() {}

  /** The length limit of a READ of {@code length} bytes of {@code path}. */
  static void checkLength(ServerContext server, String path, int length) {
    if (length > server.limits().maxReadLength()) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "READ of " + length
          + " bytes of " + RootDirectory.show(path) + " exceeds the limit of server "
          + server.address() + ": " + server.limits().maxReadLength() + " bytes per request");
    }
  }

  /**
   * What to throw when the walk to a READ's file refused it ({@code e}): a READ of a named
   * version whose file is gone is told that the file changed, not that it never was.
   */
  static RequestRefusedException notOpened(ServerContext server, String path, FileVersion expected,
      RequestRefusedException e) {
    if (expected.isChecked() && e.code() == ErrorCode.NOT_FOUND) {
      return changed(server, path, expected, "no file (deleted or renamed away)", e);
    }
    return e;
  }

  /**
   * Refuses a READ of {@code expected} when {@code file} is another version. The version is
   * compared with the attributes of the race-safe walk that found the file ({@code fstatat}
   * relative to the directory it opened: {@link RootDirectory#openFile}), never with a second
   * lookup by path from the root, which a swapped directory could lead elsewhere; it costs no
   * system call of its own. When the name held another file after the open than before it (a
   * rename raced the open), the walk's attributes are not the opened file's: refused too.
   */
  static void checkVersion(ServerContext server, String path, FileVersion expected,
      OpenFiles.OpenFile file) {
    if (!expected.isChecked()) {
      return;
    }
    BasicFileAttributes a = file.attributes();
    if (file.fileKey() == null && a.fileKey() != null) {
      throw changed(server, path, expected, "another file (renamed over while it was opened)",
          null);
    }
    FileVersion found = FileVersions.of(a);
    if (!found.equals(expected)) {
      throw changed(server, path, expected, found.describe(), null);
    }
  }

  /** Refuses a range that a file of {@code size} bytes does not hold. */
  static void checkRange(String path, long offset, int length, long size) {
    if (offset > size || offset + length > size) {
      throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "Read of "
          + RootDirectory.show(path) + " at offset " + offset + " length "
          + length + " runs past the end of the file (" + size + " bytes)");
    }
  }

  /**
   * The regular file {@code path} names below the root, opened ({@link RootDirectory#openFile}),
   * checked to be version {@code expected} and to hold {@code [offset, offset + length)}; the
   * caller closes its channel. For reads that keep no files open between requests (RDMA).
   */
  static OpenFiles.OpenFile open(ServerContext server, String path, FileVersion expected,
      long offset, int length) {
    checkLength(server, path, length);
    RequestedPath requested = RequestedPath.of(path);
    FoundFile found;
    try {
      found = server.root().openFile(requested, null, null);
    } catch (RequestRefusedException e) {
      throw notOpened(server, path, expected, e);
    }
    try {
      OpenFiles.OpenFile file = new OpenFiles.OpenFile(found.channel(), found.size(),
          found.fileKey(), found.attributes(), requested.normalized());
      checkVersion(server, path, expected, file);
      checkRange(path, offset, length, file.size());
      return file;
    } catch (RuntimeException e) {
      found.close();
      throw e;
    }
  }

  /**
   * Refuses the READ whose bytes were just read or sent from {@code file} when that file
   * changed meanwhile: its size, modification or change time is no longer what the check
   * before saw.
   *
   * <p>Why after: {@code pread} and {@code sendfile} copy from the page cache while a writer
   * may be writing into it, so bytes of one answer can come from before and after a write; the
   * check before the read cannot see a write that lands during it. Every write updates the
   * modification and change times before it copies its data (file_update_time), so a write
   * that touched the bytes sent is seen here; and a writer can put the modification time back
   * but never the change time ({@link FileVersions}).
   *
   * <p>What is looked at is the opened file itself, not whatever the path names now: {@code fstat}
   * of the channel's descriptor ({@link DescriptorAttributes}), one system call and no walk,
   * when the walk that found the file knew the channel to have it open (a file key). That sees
   * every write into the inode read, also one that renamed it away during the read. A rename
   * over the path or a delete during the read it does not see, nor need to: the descriptor kept
   * reading the old inode, so the bytes are one version, the one checked before, and the next
   * READ's walk finds the new file (or none) and is refused there with FILE_CHANGED.
   *
   * <p>Where the JVM gives no {@code fstat} (see {@link DescriptorAttributes}), the path is walked
   * again as every READ walks it ({@link RootDirectory#attributesNow}: {@code fstatat} relative
   * to the opened directories, nothing followed; {@code kept}, the connection's directories,
   * spares the opens), and its attributes are taken only when the name still holds the very file
   * read (same file key; the open descriptor keeps the inode, so its number cannot be reused
   * meanwhile). A lookup by path from the root would reopen the race the walk closes: a
   * directory swapped for a symlink would make it stat, and name in its error, a file outside
   * the root. When the name holds another file or none, only the size of the old inode can be
   * checked ({@code fstat} through the channel): a write in place into it during the read that
   * also renamed it away goes unseen on that path.
   */
  static void checkUnchanged(ServerContext server, String path, FileVersion expected,
      OpenFiles.OpenFile file, RootDirectory.KeptDirectories kept) {
    checkUnchanged(server, server.root(), path, expected, file, kept);
  }

  /** As above, for a file {@code root} holds (a shuffle file, in one of several directories). */
  static void checkUnchanged(ServerContext server, RootDirectory root, String path,
      FileVersion expected, OpenFiles.OpenFile file, RootDirectory.KeptDirectories kept) {
    BasicFileAttributes before = file.attributes();
    String found;
    BasicFileAttributes now = file.fileKey() == null ? null : descriptorAttributes(path, file);
    if (now == null && file.fileKey() != null) {
      try {
        now = root.attributesNow(RequestedPath.of(path), kept);
      } catch (RequestRefusedException gone) {
        now = null;
      }
    }
    if (now != null && file.fileKey() != null && file.fileKey().equals(now.fileKey())) {
      if (FileVersions.sameVersion(before, now)) {
        return;
      }
      found = FileVersions.of(now).describe();
    } else {
      long size;
      try {
        size = file.channel().size();
      } catch (IOException e) {
        throw new RequestRefusedException(ErrorCode.IO_ERROR,
            "Cannot read the size of " + RootDirectory.show(path) + ": " + e, e);
      }
      if (size == file.size()) {
        return;
      }
      found = size + " bytes";
    }
    throw changed(server, path, expected.isChecked() ? expected : FileVersions.of(before),
        found + ", while it was being read", null);
  }

  private static BasicFileAttributes descriptorAttributes(String path, OpenFiles.OpenFile file) {
    try {
      return DescriptorAttributes.of(file.channel());
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot read the attributes of " + RootDirectory.show(path) + ": " + e, e);
    }
  }

  static RequestRefusedException changed(ServerContext server, String path, FileVersion expected,
      String found, Throwable cause) {
    return new RequestRefusedException(ErrorCode.FILE_CHANGED, "File " + RootDirectory.show(path)
        + " on gpudirect server " + server.address() + " changed since it was opened: expected "
        + expected.describe() + ", found " + found + "; no bytes of the changed file were used."
        + " Read it again from the start (re-run the job) once its writer is done", cause);
  }
}
