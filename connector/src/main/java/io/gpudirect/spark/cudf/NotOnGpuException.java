package io.gpudirect.spark.cudf;

import io.gpudirect.GpuDirectException;

/**
 * This data cannot be served from the GPU exactly as Spark's host reader would serve it (a
 * type without a GPU layout, dates that need a calendar rebase, ...). With
 * {@code output=auto} the slice is read on the host instead; with {@code output=gpu} this is
 * the error the user sees.
 */
public class NotOnGpuException extends GpuDirectException {
  private final String reason;

  public NotOnGpuException(String reason) {
    super(reason);
    this.reason = reason;
  }

  /** {@code reason} holds for the whole of {@code file}, which the message names. */
  public NotOnGpuException(String file, String reason) {
    super(file, "Cannot read " + file + " on the GPU: " + reason, null);
    this.reason = reason;
  }

  /** Why, naming no file: the same words for every file it holds for. */
  public String reason() {
    return reason;
  }
}
