package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;

/** A CUDA call failed; the message names the call and CUDA's own error text. */
public class CudaException extends GpuDirectException {
  private final int error;

  public CudaException(String call, int error, String cudaText) {
    super("CUDA " + call + " failed: " + cudaText + " (error " + error + ")");
    this.error = error;
  }

  /** A failure better told in our words than CUDA's; the message is {@code reason} alone. */
  public CudaException(int error, String reason) {
    super(reason);
    this.error = error;
  }

  public int error() {
    return error;
  }
}
