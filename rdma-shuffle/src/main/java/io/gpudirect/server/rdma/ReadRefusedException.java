package io.gpudirect.server.rdma;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;

/**
 * The server refuses one RDMA READ: the session answers it with ERROR({@link #code}) and the
 * queue pair carries on. The message names the path, as the client will show it.
 */
public class ReadRefusedException extends GpuDirectException {
  private final ErrorCode code;

  public ReadRefusedException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public ErrorCode code() {
    return code;
  }
}
