package io.gpudirect.shuffle;

import io.gpudirect.DaemonThreads;
import io.gpudirect.GpuDirectException;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.client.RemoteStore;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The connections of one executor to the shuffle servers of the others: one {@link BlockClient}
 * per server, shared by every reduce task of the executor, made on first use on a thread of its
 * own (connecting retries with backoff, and no task's other fetches should wait for it). A
 * server that cannot be reached is tried again by the next fetch that needs it. Made and closed
 * by whoever runs the shuffle on the executor. The transport is {@code config}'s, as for file
 * reads: over RDMA (UCX or DiSNI) a block's windows travel on the queue pair.
 */
public final class ShuffleClients implements AutoCloseable {
  private final ClientConfig config;
  private final ClientContext context;
  private final Map<InetSocketAddress, CompletableFuture<RemoteStore>> clients = new ConcurrentHashMap<>();
  private final ExecutorService connecting;
  private volatile boolean closed;

  public ShuffleClients(ClientConfig config, ClientContext context) {
    this.config = config;
    this.context = context;
    this.connecting = Executors.newCachedThreadPool(DaemonThreads.numbered("gpudirect-shuffle-connect"));
  }

  /** The client of {@code server}, once connected; a failed connect fails the future. */
  CompletableFuture<RemoteStore> client(InetSocketAddress server) {
    if (closed) {
      return CompletableFuture.failedFuture(new GpuDirectException("The shuffle clients are closed"));
    }
    CompletableFuture<RemoteStore> f = clients.computeIfAbsent(server, s ->
        CompletableFuture.supplyAsync(() -> BlockClient.connect(s, config, context), connecting));
    f.whenComplete((c, err) -> {
      if (err != null) {
        clients.remove(server, f);
      } else if (closed) {
        c.close();
      }
    });
    return f;
  }

  /**
   * Bytes fetched so far over each transport, by its name ({@link RemoteStore#transport()}: tcp,
   * or the RDMA provider's carrier), summed over the servers connected now.
   */
  public Map<String, Long> bytesFetchedByTransport() {
    Map<String, Long> bytes = new TreeMap<>();
    for (CompletableFuture<RemoteStore> f : clients.values()) {
      if (f.isDone() && !f.isCompletedExceptionally()) {
        RemoteStore c = f.join();
        bytes.merge(c.transport(), c.stats().bytesFetched(), Long::sum);
      }
    }
    return bytes;
  }

  /** Closes every client: fetches still outstanding fail. */
  @Override
  public void close() {
    closed = true;
    connecting.shutdownNow();
    for (InetSocketAddress s : clients.keySet().toArray(new InetSocketAddress[0])) {
      CompletableFuture<RemoteStore> f = clients.remove(s);
      if (f != null && f.isDone() && !f.isCompletedExceptionally()) {
        f.join().close();
      }
    }
    try {
      connecting.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
