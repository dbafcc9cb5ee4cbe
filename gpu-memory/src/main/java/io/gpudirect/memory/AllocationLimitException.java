package io.gpudirect.memory;

import io.gpudirect.GpuDirectException;

/** An allocation would take an allocator (or one of its ancestors) past its byte limit. */
public final class AllocationLimitException extends GpuDirectException {
  private final String allocator;
  private final long requested;
  private final long used;
  private final long limit;

  AllocationLimitException(String allocator, String what, long requested, long used, long limit) {
    super(String.format(
        "Cannot allocate %d bytes from allocator '%s' (%s): %d of its %d-byte limit already in use;"
            + " raise the limit or close buffers sooner", requested, allocator, what, used, limit));
    this.allocator = allocator;
    this.requested = requested;
    this.used = used;
    this.limit = limit;
  }

  public String allocator() { return allocator; }

  public long requested() { return requested; }

  public long used() { return used; }

  public long limit() { return limit; }
}
