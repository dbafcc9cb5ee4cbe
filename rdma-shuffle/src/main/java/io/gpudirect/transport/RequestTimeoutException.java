package io.gpudirect.transport;

/** A request got no complete answer within the request timeout; its connection was closed. */
public class RequestTimeoutException extends TransportException {
  public RequestTimeoutException(String message) {
    super(message);
  }
}
