package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.server.RootDirectory.CheckedFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The checks every READ passes, whatever carries it: length limit, path, file, version, range;
 * and, once its bytes are read or sent, that the file did not change meanwhile.
 */
final class FileRanges {
  private FileRanges() {}

  /**
   * The length limit, the path and the version: the file a READ of {@code length} bytes of
   * {@code expected} may read. The version is compared with the attributes of the check's own
   * {@code lstat}: it costs no system call of its own.
   */
  static CheckedFile check(BlockServer server, String path, FileVersion expected, int length) {
    if (length > server.maxReadLength()) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "READ of " + length
          + " bytes of " + RootDirectory.show(path) + " exceeds the limit of server "
          + server.address() + ": " + server.maxReadLength() + " bytes per request");
    }
    CheckedFile file;
    try {
      file = server.root().checkedFile(path);
    } catch (RequestRefusedException e) {
      if (expected.isChecked() && e.code() == ErrorCode.NOT_FOUND) {
        throw changed(server, path, expected, "no file (deleted or renamed away)", e);
      }
      throw e;
    }
    if (expected.isChecked()) {
      FileVersion found = FileVersion.of(file.attributes());
      if (!found.equals(expected)) {
        throw changed(server, path, expected, found.describe(), null);
      }
    }
    return file;
  }

  /**
   * Refuses the READ whose bytes were just read or sent from {@code file} when the path no
   * longer names that file as the check saw it: one more {@code lstat}, after the bytes.
   *
   * <p>Why after: {@code pread} and {@code sendfile} copy from the page cache while a writer
   * may be writing into it, so bytes of one answer can come from before and after a write;
   * the check before the read cannot see a write that lands during it. Every write updates
   * the modification time before it copies its data (file_update_time), so a write that
   * touched the bytes sent is seen here. (A rename onto the path cannot mix bytes, since the
   * open descriptor keeps reading the old inode, but it is refused too: the path now names
   * another file, and the next READ would be refused anyway.)
   */
  static void checkUnchanged(BlockServer server, String path, FileVersion expected, CheckedFile file) {
    BasicFileAttributes before = file.attributes();
    String found;
    try {
      BasicFileAttributes now = Files.readAttributes(file.path(), BasicFileAttributes.class,
          LinkOption.NOFOLLOW_LINKS);
      // Compared as attributes, not as FileVersions: no text made per READ.
      if (now.size() == before.size() && now.lastModifiedTime().equals(before.lastModifiedTime())
          && java.util.Objects.equals(now.fileKey(), before.fileKey())) {
        return;
      }
      found = FileVersion.of(now).describe();
    } catch (IOException e) {
      found = "no file (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")";
    }
    throw changed(server, path, expected.isChecked() ? expected : FileVersion.of(before),
        found + ", while it was being read", null);
  }

  static RequestRefusedException changed(BlockServer server, String path, FileVersion expected,
      String found, Throwable cause) {
    return new RequestRefusedException(ErrorCode.FILE_CHANGED, "File " + RootDirectory.show(path)
        + " on gpudirect server " + server.address() + " changed since it was opened: expected "
        + expected.describe() + ", found " + found + "; no bytes of the changed file were used."
        + " Read it again from the start (re-run the job) once its writer is done", cause);
  }

  /** Refuses a range that a file of {@code size} bytes does not hold. */
  static void checkRange(String path, long offset, int length, long size) {
    if (offset > size || offset + length > size) {
      throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "Read of "
          + RootDirectory.show(path) + " at offset " + offset + " length "
          + length + " runs past the end of the file (" + size + " bytes)");
    }
  }

  /** {@code file} opened, checked to hold {@code [offset, offset + length)}; the caller closes it. */
  static FileChannel open(CheckedFile file, String path, long offset, int length) {
    FileChannel fc;
    try {
      fc = FileChannel.open(file.path(), StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot open " + RootDirectory.show(path) + ": " + e, e);
    }
    try {
      checkRange(path, offset, length, fc.size());
      return fc;
    } catch (IOException e) {
      close(fc);
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot read the size of " + RootDirectory.show(path) + ": " + e, e);
    } catch (RuntimeException e) {
      close(fc);
      throw e;
    }
  }

  private static void close(FileChannel fc) {
    try {
      fc.close();
    } catch (IOException ignored) {
      // nothing left to do
    }
  }
}
