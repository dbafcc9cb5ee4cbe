package io.gpudirect.server;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;

/** A request the server answers with an ERROR; the connection carries on. */
class RequestRefusedException extends GpuDirectException {
  private final ErrorCode code;

  RequestRefusedException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  RequestRefusedException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  ErrorCode code() {
    return code;
  }
}
