package io.gpudirect.transport;

/**
 * A READ payload arrived whose CRC32C differs from the one the server computed, or an answer
 * whose frame's does ({@link CorruptAnswerException}).
 */
public class ChecksumMismatchException extends TransportException {
  public ChecksumMismatchException(String message) {
    super(message);
  }

  public ChecksumMismatchException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * The one wording of a mismatch, naming what was read and where from: {@code source} as in
   * "from gpudirect server HOST:PORT" or "over RDMA from HOST:PORT".
   */
  public ChecksumMismatchException(String path, long offset, int length, String source, int expected, int actual) {
    this(String.format("CRC32C mismatch reading '%s' at offset %d length %d %s: expected %08x, got %08x",
        path, offset, length, source, expected, actual));
  }
}
