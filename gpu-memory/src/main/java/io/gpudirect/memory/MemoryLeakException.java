package io.gpudirect.memory;

import io.gpudirect.GpuDirectException;

/** Buffers were still alive where none may be: closing an allocator, or a leak check. */
public final class MemoryLeakException extends GpuDirectException {
  private final long buffers;
  private final long bytes;

  public MemoryLeakException(String message, long buffers, long bytes) {
    super(message);
    this.buffers = buffers;
    this.bytes = bytes;
  }

  public long buffers() { return buffers; }

  public long bytes() { return bytes; }
}
