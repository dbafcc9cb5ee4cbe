package io.gpudirect.verbs.ucx;

import io.gpudirect.verbs.MemoryRegion;
import org.openucx.jucx.ucp.UcpMemory;

/**
 * A region on a {@link UcxEndpoint}. Remotely writable memory is mapped with UCX
 * ({@code ucp_mem_map}) and its packed rkey announced to the peer under {@link #rkey()}, a
 * number that names it on this endpoint; closing revokes it there and unmaps it. Memory only
 * this side touches (control slots, the server's chunks) is not mapped here: UCX registers a
 * source or a receive buffer in its own cache on first use, and keeps it.
 */
final class UcxRegion implements MemoryRegion {
  private final UcxEndpoint endpoint;
  private final long address;
  private final long length;
  private final UcpMemory memory;
  private final int rkey;
  private boolean closed;

  UcxRegion(UcxEndpoint endpoint, long address, long length, UcpMemory memory, int rkey) {
    this.endpoint = endpoint;
    this.address = address;
    this.length = length;
    this.memory = memory;
    this.rkey = rkey;
  }

  @Override
  public long address() {
    return address;
  }

  @Override
  public long length() {
    return length;
  }

  /** No local keys in UCX: a region is named by its address on this side. */
  @Override
  public int lkey() {
    return 0;
  }

  /** The number this endpoint announced the region's packed rkey under; 0 when not remotely writable. */
  @Override
  public int rkey() {
    return rkey;
  }

  UcxEndpoint endpoint() {
    return endpoint;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    if (memory != null) {
      endpoint.revoke(this, memory);
    }
  }
}
