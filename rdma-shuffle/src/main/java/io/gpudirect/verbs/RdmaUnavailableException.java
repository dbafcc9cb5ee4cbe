package io.gpudirect.verbs;

import io.gpudirect.GpuDirectException;

/**
 * RDMA cannot be used here, for a reason that does not change by retrying: libdisni is not
 * installed, there is no RDMA device, or the server does not serve RDMA. With
 * {@code transport=auto} the client reads over TCP and reports {@link #reason()}; with
 * {@code transport=rdma} this is the error.
 */
public class RdmaUnavailableException extends GpuDirectException {
  private final String reason;
  private final String remedy;
  private final String summary;

  public RdmaUnavailableException(String reason, String remedy, Throwable cause) {
    this(reason, remedy, cause, reason);
  }

  /** {@code summary}: the reason in a few words, for the one line a TCP fallback logs. */
  public RdmaUnavailableException(String reason, String remedy, Throwable cause, String summary) {
    super(reason + (remedy == null ? "" : "; " + remedy), cause);
    this.reason = reason;
    this.remedy = remedy;
    this.summary = summary;
  }

  /** What is missing, in words (for the scan's metrics and the log). */
  public String reason() {
    return reason;
  }

  /** What is missing in a few words, e.g. "no RDMA device"; the details are {@link #reason()}. */
  public String summary() {
    return summary;
  }

  /** How to install or enable what is missing; may be null. */
  public String remedy() {
    return remedy;
  }
}
