package io.gpudirect.client;

import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuSettings;
import io.gpudirect.transport.ConnectionThreads;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What the clients of one embedding share, created and closed by that embedding: the threads
 * their connections check checksums and handshake deadlines on ({@link ConnectionThreads}),
 * the stores kept for reuse ({@link #store}), and the pinned pool, copy engine and device
 * allocator of their GPU reads ({@link #gpu}). An application that runs clients and a
 * server in one JVM gives each side its own; Spark executors, the CLI and clients made without
 * one use {@link #shared()}, the JVM's.
 */
public final class ClientContext implements AutoCloseable {
  private static ClientContext shared;

  private final ConnectionThreads threads = new ConnectionThreads();
  private final Map<Object, RemoteStore> stores = new ConcurrentHashMap<>();
  /** The steps of the transport fallback ladder logged so far: each reason once. */
  private final Set<String> fallbacksSaid = ConcurrentHashMap.newKeySet();
  private GpuResources gpu;
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

  /** The GPU resources made already, or ones of the default sizes ({@link GpuSettings#DEFAULTS}). */
  public GpuResources gpu() {
    return gpu(() -> GpuSettings.DEFAULTS);
  }

  /**
   * The GPU resources of this context's reads, made on first use (pinning memory and starting
   * the copy engine only where something reads into the GPU) with the settings {@code settings}
   * gives then; later calls get the same ones. The JVM's shared context gives them back at exit.
   */
  public synchronized GpuResources gpu(Supplier<GpuSettings> settings) {
    if (gpu == null) {
      gpu = GpuResources.create(settings.get());
      if (this == shared) {
        GpuResources made = gpu;
        Runtime.getRuntime().addShutdownHook(new Thread(made::close, "gpudirect-gpu-resources-shutdown"));
      }
    }
    return gpu;
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
   * Closes the stores kept here, then stops the threads and gives the GPU resources back;
   * close other clients of it first.
   */
  @Override
  public void close() {
    closed = true;
    closeStores();
    threads.close();
    synchronized (this) {
      if (gpu != null) {
        gpu.close();
        gpu = null;
      }
    }
  }
}
