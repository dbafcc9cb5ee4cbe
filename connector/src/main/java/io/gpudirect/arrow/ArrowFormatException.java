package io.gpudirect.arrow;

import io.gpudirect.GpuDirectException;

/**
 * An Arrow IPC file or stream that cannot be read: malformed, truncated, lying about its
 * lengths, or holding a type Spark cannot represent. The message always starts with the
 * display name of the file, then says what was wrong.
 */
public class ArrowFormatException extends GpuDirectException {
  public ArrowFormatException(String displayName, String reason) {
    super(displayName, message(displayName, reason), null);
  }

  public ArrowFormatException(String displayName, String reason, Throwable cause) {
    super(displayName, message(displayName, reason), cause);
  }

  private static String message(String displayName, String reason) {
    return "Cannot read Arrow IPC data " + displayName + ": " + reason;
  }
}
