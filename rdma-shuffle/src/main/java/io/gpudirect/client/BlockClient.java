package io.gpudirect.client;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.tls.TlsContexts;
import io.gpudirect.transport.PayloadMemory;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.rdma.RdmaConnectionException;
import io.gpudirect.verbs.RdmaUnavailableException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link RemoteStore} over gpudirect's own protocol. Holds {@code streams} connections to one
 * server ({@link ConnectionSlots}). A read is split into chunks, spread over the connections
 * and pipelined within a window of bytes in flight ({@link ChunkedReads}); each chunk lands
 * straight in its slice of the caller's buffer, or, over RDMA, in the caller's device memory
 * ({@link DeviceReader}).
 *
 * <p>Reads are idempotent, so a chunk whose connection drops or whose CRC32C does not match
 * is retried (new connection, exponential backoff) up to {@code maxRetries} times
 * ({@link Retries}). A chunk that times out fails its read with {@link RequestTimeoutException}.
 * Server refusals become {@link RemoteFileException}s and are not retried. Every chunk names
 * the file version the caller read from STAT or LIST, retries included, so a file that changes
 * during a read fails it with {@link FileChangedException} (never bytes of both versions,
 * never a retry into success).
 */
public final class BlockClient implements RemoteStore {
  private static final Logger LOG = LoggerFactory.getLogger(BlockClient.class);

  private final InetSocketAddress server;
  private final String serverName;
  private final ClientConfig config;
  /** Why this transport; set in {@link #connect}, before any read (a fall back may replace it there). */
  private volatile String transportReason;
  private final ClientThreads threads;
  private final ConnectionSlots connections;
  private final ChunkedReads chunks;
  private final ControlCalls control;
  private final DeviceReader device;

  private BlockClient(InetSocketAddress server, ClientConfig config,
      TransportSelector.Selection selection, TransportSelector selector) {
    this.server = server;
    this.serverName = (server.getAddress() != null ? server.getAddress().getHostAddress()
        : server.getHostString()) + ":" + server.getPort();
    this.config = config;
    this.transportReason = selection.reason();
    // Built once per client, before any thread: loading the trusted certificates is not free.
    SSLContext tls = config.tls() ? TlsContexts.client(config.tlsTrustStore()) : null;
    Retries retries = new Retries(config);
    this.threads = new ClientThreads(serverName, config.requestTimeout());
    this.connections = new ConnectionSlots(server, serverName, config, tls, threads, retries,
        selection.transport(), selection.fallback() != null);
    this.chunks = new ChunkedReads(serverName, config, connections, threads, retries);
    this.control = new ControlCalls(serverName, config, connections, retries);
    this.device = new DeviceReader(serverName, connections, chunks, selector::logOnce);
  }

  /**
   * Opens {@code config.streams()} connections to {@code server}, retrying with backoff when
   * it cannot be reached. Authentication errors are not retried.
   */
  public static BlockClient connect(InetSocketAddress server, ClientConfig config) {
    return connect(server, config, TransportSelector.of(config.rdmaProvider()));
  }

  /** As {@link #connect(InetSocketAddress, ClientConfig)}, its connections' threads those of {@code context}. */
  public static BlockClient connect(InetSocketAddress server, ClientConfig config, ClientContext context) {
    return connect(server, config, TransportSelector.of(config.rdmaProvider(), context));
  }

  /** As {@link #connect(InetSocketAddress, ClientConfig)}, choosing transports with {@code selector}. */
  public static BlockClient connect(InetSocketAddress server, ClientConfig config,
      TransportSelector selector) {
    TransportSelector.Selection selection = selector.choose(config.transport());
    BlockClient client = new BlockClient(server, config, selection, selector);
    try {
      try {
        client.connections.open(0);
      } catch (RdmaUnavailableException | RdmaConnectionException e) {
        if (selection.fallback() == null) {
          throw e;
        }
        // transport=auto: this server cannot do RDMA with us; TCP it is, and we say why.
        client.connections.fallBackTo(selection.fallback());
        client.transportReason = "transport=auto chose TCP: " + (e instanceof RdmaUnavailableException u
            ? u.reason() : "RDMA to gpudirect server " + client.serverName + " failed: " + e.getMessage());
        selector.logOnce(client.transportReason);
        client.connections.open(0);
      }
      for (int i = 1; i < client.connections.size(); i++) {
        client.connections.open(i);
      }
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    // Over TCP every ls, cat and scan connects: the transport line (TcpFallbackNotice) said once
    // why it is TCP, and the scan's metrics say it again; a connection over RDMA is worth a line.
    String connected = "Connected to gpudirect server {} over {}{} ({} streams): {}";
    Object[] args = {client.serverName, client.transport(), config.tls() ? " with TLS" : "",
        config.streams(), client.transportReason};
    if (client.connections.transport().readsIntoDevice()) {
      LOG.info(connected, args);
    } else {
      LOG.debug(connected, args);
    }
    return client;
  }

  @Override
  public InetSocketAddress server() {
    return server;
  }

  @Override
  public String transport() {
    return connections.transport().name();
  }

  @Override
  public String transportReason() {
    return transportReason + device.note();
  }

  @Override
  public FileEntry stat(String path) {
    return control.stat(path);
  }

  @Override
  public Map<String, Long> status() {
    return control.status();
  }

  /**
   * {@inheritDoc} Page by page, each asked for after the last path of the one before. What a
   * server can make this hold or take is bounded by {@link ClientConfig#maxListEntries},
   * {@link ClientConfig#maxListBytes} and {@link ClientConfig#listTimeout}, whatever it sends;
   * past one, the listing fails with a {@link ListingLimitException} that says which. A page
   * that does not go on in {@link ListingOrder} after the one before is refused too.
   */
  @Override
  public List<FileEntry> list(String path) {
    return control.list(path);
  }

  @Override
  public CompletableFuture<Void> readAsync(String path, FileVersion version, long offset, ByteBuffer dst) {
    try {
      return threads.onWorker(chunks.readIntoHost(path, version, offset, dst, false,
          chunks.chunkLength(dst.remaining()), null));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Leaves the check of the bytes' CRC32C to the caller, who completes it where the bytes go
   * next: the GPU, in device memory. The future gives the CRC32C the server sent for all of
   * {@code dst}'s bytes (the chunks' combined), or nothing when the client was built without
   * checksums.
   */
  @Override
  public CompletableFuture<OptionalInt> readAsyncUnverified(String path, FileVersion version, long offset,
      ByteBuffer dst) {
    if (!config.checksums()) {
      return readAsync(path, version, offset, dst).thenApply(v -> OptionalInt.empty());
    }
    try {
      ByteBuffer bytes = dst.slice();
      int chunk = chunks.chunkLength(bytes.remaining());
      OptionalInt[] crcs = new OptionalInt[Math.max(1, (bytes.remaining() + chunk - 1) / chunk)];
      return threads.onWorker(chunks.readIntoHost(path, version, offset, dst, false, chunk, crcs)
          .thenApply(v -> ChunkChecksums.combined(serverName, path, offset, bytes, chunk, crcs)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@inheritDoc} Over TCP a read of one chunk ({@link ClientConfig#chunkSize}) binds the memory
   * on the connection's reader thread when its answer's payload is next; a longer one binds it
   * here, at once (see {@code ChunkedReads.readIntoLateHost}).
   */
  @Override
  public CompletableFuture<Void> readAsync(String path, FileVersion version, long offset,
      int length, PayloadMemory memory) {
    try {
      return threads.onWorker(chunks.readIntoLateHost(path, version, offset, length, memory,
          chunks.chunkLength(), null));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** {@inheritDoc} As {@link #readAsyncUnverified(String, FileVersion, long, ByteBuffer)}, bound late. */
  @Override
  public CompletableFuture<OptionalInt> readAsyncUnverified(String path, FileVersion version,
      long offset, int length, PayloadMemory memory) {
    if (!config.checksums()) {
      return readAsync(path, version, offset, length, memory).thenApply(v -> OptionalInt.empty());
    }
    try {
      int chunk = chunks.chunkLength();
      OptionalInt[] crcs = new OptionalInt[Math.max(1, (length + chunk - 1) / chunk)];
      // Every chunk has arrived, so every slice is bound: bind() gives the memory without taking any.
      return threads.onWorker(chunks.readIntoLateHost(path, version, offset, length, memory, chunk, crcs)
          .thenApply(v -> ChunkChecksums.combined(serverName, path, offset, memory.bind(), chunk, crcs)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * {@inheritDoc} Over the transport the client was connected with: TCP's SHUFFLE_READ, or, over
   * RDMA, RDMA_SHUFFLE_READ on the queue pair (windows of a chunk at most: see
   * {@link io.gpudirect.transport.Transport#blockWindow}).
   */
  @Override
  public CompletableFuture<Long> readShuffleBlock(ShuffleBlockId block, BlockMemory memory) {
    return readShuffleBlock(block, -1, memory);
  }

  @Override
  public CompletableFuture<Long> readShuffleBlock(ShuffleBlockId block, long expectedLength, BlockMemory memory) {
    try {
      return threads.onWorker(chunks.readBlock(block, expectedLength, memory));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void read(String path, FileVersion version, long offset, ByteBuffer dst) {
    try {
      chunks.readWaiting(path, version, offset, dst);
    } catch (CompletionException e) {
      throw Failures.rethrowable(Failures.unwrap(e));
    }
  }

  /**
   * Where the transport reads into device memory (RDMA), reads {@code length} bytes straight
   * into device memory at {@code address}: see {@link DeviceReader}. Returns false, having
   * read nothing, when the transport is TCP or device memory cannot be registered; the caller
   * then reads into pinned host chunks and copies. The first registration failure is logged
   * once and added to {@link #transportReason()}.
   */
  @Override
  public boolean readIntoDevice(String path, FileVersion version, long offset, long address, long length) {
    return device.read(path, version, offset, address, length, transportReason);
  }

  @Override
  public TransferStats stats() {
    return chunks.stats();
  }

  @Override
  public void close() {
    if (!connections.markClosed()) {
      return;
    }
    device.close();
    connections.close();
    threads.close();
  }

  @Override
  public String toString() {
    return "BlockClient[" + serverName + ", " + transport() + ", " + config + "]";
  }
}
