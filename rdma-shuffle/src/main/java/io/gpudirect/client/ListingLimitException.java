package io.gpudirect.client;

import io.gpudirect.GpuDirectException;

/**
 * A listing went past a limit of the client's ({@link ClientConfig#maxListEntries},
 * {@link ClientConfig#maxListBytes}, {@link ClientConfig#listTimeout}): the directory is larger
 * or slower than allowed, or the server keeps sending pages. The message names the server, the
 * path, the limit and the option that raises it.
 */
public class ListingLimitException extends GpuDirectException {
  /** Which of the client's listing limits was reached. */
  public enum Limit { ENTRIES, BYTES, TIME }

  private final Limit limit;

  public ListingLimitException(Limit limit, String message) {
    super(message);
    this.limit = limit;
  }

  public Limit limit() {
    return limit;
  }
}
