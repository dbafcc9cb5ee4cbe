package io.gpudirect.client;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;

/**
 * A file changed while it was being read: it was replaced, rewritten, truncated or deleted
 * after the reader took its version (STAT, LIST, or the scan's listing on the driver). The
 * server refused the read, so no bytes of two versions were mixed; the bytes read so far are
 * of the old version and the rest cannot be had. Retrying the same read cannot succeed: read
 * the file again from the start (re-run the job) once its writer is done.
 */
public class FileChangedException extends RemoteFileException {
  private final FileVersion expected;

  public FileChangedException(String server, String path, FileVersion expected, String message,
      Throwable cause) {
    super(ErrorCode.FILE_CHANGED, server, path, message, cause);
    this.expected = expected;
  }

  /** The version the reader named; what the server found is in the message. */
  public FileVersion expected() {
    return expected;
  }
}
