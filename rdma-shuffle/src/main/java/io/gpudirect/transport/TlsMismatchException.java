package io.gpudirect.transport;

/**
 * TLS on one side only: the client asked for TLS of a server that speaks plaintext. Another
 * attempt meets the same server, so this is never retried.
 */
public class TlsMismatchException extends TransportException {
  public TlsMismatchException(String message, Throwable cause) {
    super(message, cause);
  }
}
