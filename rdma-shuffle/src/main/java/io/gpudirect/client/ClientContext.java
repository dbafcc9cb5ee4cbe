package io.gpudirect.client;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBufferPool;
import io.gpudirect.transport.ConnectionThreads;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What the clients of one embedding share, created and closed by that embedding: the threads
 * their connections check checksums and handshake deadlines on ({@link ConnectionThreads}),
 * the stores kept for reuse ({@link #store}), and the host memory their connections and
 * readers hold ({@link #memory}, {@link #pool}). An application that runs clients and a
 * server in one JVM gives each side its own; Spark executors, the CLI and clients made without
 * one use {@link #shared()}, the JVM's. GPU reads share a GPU context of their own
 * ({@code io.gpudirect.gpu.GpuResources}), which this one knows nothing of.
 */
public final class ClientContext implements AutoCloseable {
  private static ClientContext shared;

  private final ConnectionThreads threads = new ConnectionThreads();
  private final Map<Object, RemoteStore> stores = new ConcurrentHashMap<>();
  /** The steps of the transport fallback ladder logged so far: each reason once. */
  private final Set<String> fallbacksSaid = ConcurrentHashMap.newKeySet();
  private final BufferAllocator memory = BufferAllocator.root().newChildAllocator("client", Long.MAX_VALUE);
  private final Map<String, HostBufferPool> pools = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * The JVM's context, started on first use. Closing it stops its threads; the next call
   * starts a new one (a client still using the old one checks checksums on its own threads).
   */
  public static synchronized ClientContext shared() {
    if (shared == null || shared.closed) {
      shared = new ClientContext();
    }
    return shared;
  }

  /**
   * Where this context's connections charge what they hold in host memory (a TCP connection's
   * inbox and outbox, an RDMA connection's control slots and bounce buffer) and its readers
   * their pooled buffers: one node of the allocator tree, closed with the context.
   */
  public BufferAllocator memory() {
    return memory;
  }

  /**
   * The pool of {@code bufferBytes} buffers named {@code what} that this context's readers
   * share (read-ahead windows), made on first use, charged to {@link #memory}, closed with the
   * context.
   */
  public HostBufferPool pool(String what, int bufferBytes, int maxIdle) {
    HostBufferPool pool = pools.computeIfAbsent(what, w -> new HostBufferPool(memory, w, bufferBytes, maxIdle));
    if (pool.bufferBytes() != bufferBytes) {
      throw new IllegalArgumentException("The pool of " + what + " holds buffers of " + pool.bufferBytes()
          + " bytes, not " + bufferBytes);
    }
    return pool;
  }

  public ConnectionThreads connectionThreads() {
    return threads;
  }

  /** True the first time {@code reason} is seen here: see {@link TransportSelector#logOnce}. */
  boolean firstFallback(String reason) {
    return fallbacksSaid.add(reason);
  }

  /**
   * The store kept under {@code key}, made by {@code connect} the first time: every caller
   * with an equal key shares its connections. A key names what makes a store differ (server,
   * settings, a digest of the secret), never a secret itself.
   */
  public RemoteStore store(Object key, Supplier<RemoteStore> connect) {
    return stores.computeIfAbsent(key, k -> connect.get());
  }

  /** Closes every store kept here; later calls to {@link #store} connect again. */
  public void closeStores() {
    for (Object k : stores.keySet().toArray()) {
      RemoteStore s = stores.remove(k);
      if (s != null) {
        s.close();
      }
    }
  }

  /**
   * Closes the stores kept here, then stops the threads and closes the pools and the memory
   * node; close other clients of it first. Fails with a
   * {@link io.gpudirect.memory.MemoryLeakException}, naming them, when buffers charged to it are
   * still held then (a client or reader of it not closed).
   */
  @Override
  public void close() {
    closed = true;
    closeStores();
    threads.close();
    pools.values().forEach(HostBufferPool::close);
    memory.close();
  }
}
