package io.gpudirect.transport;

/**
 * The connection dropped (or was aborted) with requests outstanding; every one of them fails
 * with this. Reads are idempotent, so callers may retry on a new connection.
 */
public class ConnectionLostException extends TransportException {
  public ConnectionLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
