package io.gpudirect.transport;

/** A READ payload arrived whose CRC32C differs from the one the server computed. */
public class ChecksumMismatchException extends TransportException {
  public ChecksumMismatchException(String message) {
    super(message);
  }
}
