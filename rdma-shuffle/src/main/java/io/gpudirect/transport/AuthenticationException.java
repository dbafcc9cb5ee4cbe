package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;

/** The client and server could not authenticate each other; retrying will not help. */
public class AuthenticationException extends GpuDirectException {
  public AuthenticationException(String message) {
    super(message);
  }
}
