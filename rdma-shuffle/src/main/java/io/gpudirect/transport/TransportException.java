package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;

/** A failure to reach or keep talking to a server; the message names the peer. */
public class TransportException extends GpuDirectException {
  public TransportException(String message) {
    super(message);
  }

  public TransportException(String message, Throwable cause) {
    super(message, cause);
  }
}
