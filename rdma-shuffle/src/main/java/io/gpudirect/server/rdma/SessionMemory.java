package io.gpudirect.server.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;

/**
 * The host memory one bound queue pair serves with: its file chunks and its control slots.
 * Allocated when an authenticated TCP connection is offered a queue pair, so that an offer the
 * server cannot afford is refused on that connection, where the client can be told, rather than
 * failing later on the queue pair; owned by the offer until a queue pair binds to it, then by
 * that queue pair's session, which closes it.
 */
record SessionMemory(HostBuffer chunks, HostBuffer slots) implements AutoCloseable {
  static SessionMemory allocate(BufferAllocator allocator, RdmaService.Settings s) {
    HostBuffer chunks = allocator.allocate(Math.multiplyExact(s.chunks(), s.chunkBytes()));
    try {
      // credits + 1 receive slots (one spare for a request that overtakes its credit's
      // return), credits send slots
      return new SessionMemory(chunks, allocator.allocate(Math.multiplyExact(2 * s.credits() + 1,
          s.slotBytes())));
    } catch (RuntimeException e) {
      chunks.close();
      throw e;
    }
  }

  static long bytes(RdmaService.Settings s) {
    return (long) s.chunks() * s.chunkBytes() + (long) (2 * s.credits() + 1) * s.slotBytes();
  }

  @Override
  public void close() {
    chunks.close();
    slots.close();
  }
}
