package io.gpudirect.server.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.util.concurrent.CompletionStage;

/**
 * The host memory one bound queue pair serves with: its file chunks and its control slots.
 * Allocated when an authenticated TCP connection is offered a queue pair, so that an offer the
 * server cannot afford is refused on that connection, where the client can be told, rather than
 * failing later on the queue pair; owned by the offer until a queue pair binds to it, then by
 * that queue pair's session, which closes it.
 *
 * <p>Freed at its last close, not left to the collector: a server whose clients connect often
 * made 8.5 MiB of garbage per queue pair faster than collections freed it, reached
 * {@code -XX:MaxDirectMemorySize}, stalled every allocation in {@code System.gc()} and failed
 * offers and reads (docs/security.md). So each party that may still touch the memory after the
 * session closes holds it ({@link #hold}): the provider until its endpoint is
 * {@linkplain io.gpudirect.verbs.RdmaEndpoint#released() released}, the session's worker until it
 * has ended. The charge goes back at the session's close, the memory when the last lets go.
 */
record SessionMemory(HostBuffer chunks, HostBuffer slots) implements AutoCloseable {
  static SessionMemory allocate(BufferAllocator allocator, RdmaService.Settings s) {
    HostBuffer chunks = allocator.allocateFreedAtClose(Math.multiplyExact(s.chunks(), s.chunkBytes()),
        "chunks of an RDMA queue pair");
    try {
      // credits + 1 receive slots (one spare for a request that overtakes its credit's
      // return), credits send slots
      return new SessionMemory(chunks, allocator.allocateFreedAtClose(Math.multiplyExact(2 * s.credits() + 1,
          s.slotBytes()), "control slots of an RDMA queue pair"));
    } catch (RuntimeException e) {
      chunks.close();
      throw e;
    }
  }

  static long bytes(RdmaService.Settings s) {
    return (long) s.chunks() * s.chunkBytes() + (long) (2 * s.credits() + 1) * s.slotBytes();
  }

  /** Keeps both buffers' memory, not their charge, until {@code done} completes. */
  void holdUntil(CompletionStage<?> done) {
    chunks.holdUntil(done);
    slots.holdUntil(done);
  }

  /** Keeps both buffers' memory, not their charge, until the result is closed. */
  Held hold() {
    HostBuffer.Hold c = chunks.hold();
    try {
      return new Held(c, slots.hold());
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  record Held(HostBuffer.Hold chunks, HostBuffer.Hold slots) implements AutoCloseable {
    @Override
    public void close() {
      chunks.close();
      slots.close();
    }
  }

  @Override
  public void close() {
    chunks.close();
    slots.close();
  }
}
