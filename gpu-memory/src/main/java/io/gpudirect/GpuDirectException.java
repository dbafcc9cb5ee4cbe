package io.gpudirect;

/**
 * The one unchecked exception family of gpudirect. The message is the first thing a user
 * sees, so it names the file, the server and what to do, and the cause is always carried.
 */
public class GpuDirectException extends RuntimeException {
  public GpuDirectException(String message) {
    super(message);
  }

  public GpuDirectException(String message, Throwable cause) {
    super(message, cause);
  }
}
