package io.gpudirect.transport;

/**
 * A frame from the server whose CRC32C does not match its bytes (a STAT or LIST answer, an
 * error, the handshake's): it changed on the way. Nothing in it is believed; the connection it
 * came on is closed, and what was outstanding on it may be retried on a new one.
 */
public class CorruptAnswerException extends ChecksumMismatchException {
  public CorruptAnswerException(String message, Throwable cause) {
    super(message, cause);
  }
}
