package io.gpudirect.server.rdma;

import io.gpudirect.GpuDirectException;

/** An authenticated connection cannot have another queue pair now; the message says why. */
public final class OfferRefusedException extends GpuDirectException {
  public OfferRefusedException(String message, Throwable cause) {
    super(message, cause);
  }
}
