package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;

/**
 * The server answered a request with ERROR. The client turns it into a
 * {@code RemoteFileException} that also names the server and the path.
 */
public class ServerErrorException extends GpuDirectException {
  private final ErrorCode code;

  public ServerErrorException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public ErrorCode code() {
    return code;
  }
}
