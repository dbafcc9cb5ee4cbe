package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.server.RootDirectory.FoundFile;
import java.nio.channels.FileChannel;

/** The checks every READ passes, whatever carries it: length limit, path, file, range. */
final class FileRanges {
  private FileRanges() {}

  /** The length limit of a READ of {@code length} bytes of {@code path}. */
  static void checkLength(BlockServer server, String path, int length) {
    if (length > server.maxReadLength()) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "READ of " + length
          + " bytes of " + RootDirectory.show(path) + " exceeds the limit of server "
          + server.address() + ": " + server.maxReadLength() + " bytes per request");
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
   * The regular file {@code path} names below the root, opened ({@link RootDirectory#openFile})
   * and checked to hold {@code [offset, offset + length)}; the caller closes it.
   */
  static FileChannel open(BlockServer server, String path, long offset, int length) {
    checkLength(server, path, length);
    FoundFile file = server.root().openFile(RequestedPath.of(path), null, null);
    try {
      checkRange(path, offset, length, file.size());
      return file.channel();
    } catch (RuntimeException e) {
      file.close();
      throw e;
    }
  }
}
