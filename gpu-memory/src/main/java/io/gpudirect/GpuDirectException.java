package io.gpudirect;

/**
 * The one unchecked exception family of gpudirect. The message is the first thing a user
 * sees, so it names the file, the server and what to do, and the cause is always carried.
 */
public class GpuDirectException extends RuntimeException {
  private final String file;

  public GpuDirectException(String message) {
    super(message);
    this.file = null;
  }

  public GpuDirectException(String message, Throwable cause) {
    super(message, cause);
    this.file = null;
  }

  /**
   * A failure about one file, which {@code message} names.
   *
   * @param file the file as the message names it: a gpudirect:// URI, or a path
   * @param cause may be null
   */
  public GpuDirectException(String file, String message, Throwable cause) {
    super(message, cause);
    this.file = file;
  }

  /**
   * The file this failure is about, as its message names it; null when it names none. Code
   * that adds context asks this, never the message's text, whether the file is named already.
   */
  public String file() {
    return file;
  }
}
