package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;

/** The server refused a request about one path; {@link #code()} says why. */
public class RemoteFileException extends GpuDirectException {
  private final ErrorCode code;
  private final String server;
  private final String path;

  public RemoteFileException(ErrorCode code, String server, String path, String message,
      Throwable cause) {
    super(message, cause);
    this.code = code;
    this.server = server;
    this.path = path;
  }

  public ErrorCode code() {
    return code;
  }

  /** host:port of the server that refused. */
  public String server() {
    return server;
  }

  /** The path as the request named it. */
  public String path() {
    return path;
  }
}
