package io.gpudirect.spark.cudf;

import io.gpudirect.GpuDirectException;

/**
 * This data cannot be served from the GPU exactly as Spark's host reader would serve it (a
 * type without a GPU layout, dates that need a calendar rebase, ...). With
 * {@code output=auto} the slice is read on the host instead; with {@code output=gpu} this is
 * the error the user sees.
 */
public class NotOnGpuException extends GpuDirectException {
  public NotOnGpuException(String message) {
    super(message);
  }
}
