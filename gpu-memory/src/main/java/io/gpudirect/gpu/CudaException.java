package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;

/** A CUDA call failed; the message names the call and CUDA's own error text. */
public class CudaException extends GpuDirectException {
  private final int error;

  public CudaException(String call, int error, String cudaText) {
    super("CUDA " + call + " failed: " + cudaText + " (error " + error + ")");
    this.error = error;
  }

  public int error() {
    return error;
  }
}
