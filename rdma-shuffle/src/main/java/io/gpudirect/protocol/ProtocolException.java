package io.gpudirect.protocol;

import io.gpudirect.GpuDirectException;

/** Bytes on the wire that are not a valid gpudirect message; the message says what was wrong. */
public class ProtocolException extends GpuDirectException {
  public ProtocolException(String message) {
    super(message);
  }

  public ProtocolException(String message, Throwable cause) {
    super(message, cause);
  }
}
