package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.server.RootDirectory.CheckedFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;

/** The checks every READ passes, whatever carries it: length limit, path, file, range. */
final class FileRanges {
  private FileRanges() {}

  /** The length limit and the path: the file a READ of {@code length} bytes may read. */
  static CheckedFile check(BlockServer server, String path, int length) {
    if (length > server.maxReadLength()) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "READ of " + length
          + " bytes of " + RootDirectory.show(path) + " exceeds the limit of server "
          + server.address() + ": " + server.maxReadLength() + " bytes per request");
    }
    return server.root().checkedFile(path);
  }

  /** Refuses a range that a file of {@code size} bytes does not hold. */
  static void checkRange(String path, long offset, int length, long size) {
    if (offset > size || offset + length > size) {
      throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "Read of "
          + RootDirectory.show(path) + " at offset " + offset + " length "
          + length + " runs past the end of the file (" + size + " bytes)");
    }
  }

  /** The open file, checked to hold {@code [offset, offset + length)}; the caller closes it. */
  static FileChannel open(BlockServer server, String path, long offset, int length) {
    CheckedFile file = check(server, path, length);
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
