package io.gpudirect.verbs;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One reliable-connected queue pair. Posts never block; their outcome arrives as a
 * {@link WorkCompletion} on the endpoint's {@link CompletionHandler}. Every post is signaled,
 * so each one completes exactly once, successfully or with an error (a flush after the queue
 * pair broke). A memory region registered here lives in the endpoint's protection domain and
 * is closed by whoever registered it, after the last work request using it has completed.
 */
public interface RdmaEndpoint extends AutoCloseable {
  InetSocketAddress peer();

  /** Registers {@code length} (at most {@link MemoryRegion#MAX_LENGTH}) bytes at {@code address}. */
  MemoryRegion register(long address, long length, Set<Access> access);

  /** Registers a direct buffer's memory from position 0 to its capacity. */
  MemoryRegion register(ByteBuffer direct, Set<Access> access);

  /** A receive of up to {@code length} bytes into {@code region} at {@code offset}. */
  void postRecv(long wrId, MemoryRegion region, long offset, int length);

  /** A SEND of {@code length} bytes from {@code region} at {@code offset}. */
  void postSend(long wrId, MemoryRegion region, long offset, int length);

  /** An RDMA WRITE of {@code length} bytes from {@code region} at {@code offset} to the peer's memory. */
  void postWrite(long wrId, MemoryRegion region, long offset, int length, long remoteAddress,
      int rkey);

  /**
   * The peer of an endpoint a listener accepted has proven who it is (for a server: it presented
   * a token from an authenticated connection). Until then a provider takes nothing from it but
   * SENDs into the receives posted for it: no key announcements, no writes, no work of its own.
   * Endpoints this side connected start admitted. Call it from the completion of the receive
   * that proved the peer, so the peer's next message is already judged by it.
   */
  void admit();

  /** Disconnects; outstanding work requests complete with flush errors. Idempotent. */
  @Override
  void close();

  /**
   * Completes once, after {@link #close}, the provider touches no memory of this endpoint's work
   * requests any more: its queue pair destroyed (verbs), or UCX done closing the endpoint, which
   * may finish a canceled send or receive after its flush reached the handler. Memory made for
   * one queue pair may be freed then, not before.
   */
  CompletableFuture<Void> released();

  /** {@code HOST:PORT} with the numeric address where there is one, for names and messages. */
  static String describe(InetSocketAddress a) {
    String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
    return host + ":" + a.getPort();
  }
}
