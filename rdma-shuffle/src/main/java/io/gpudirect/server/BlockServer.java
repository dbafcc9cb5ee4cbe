package io.gpudirect.server;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the files below one root directory, read-only, to gpudirect clients over TCP.
 * One thread per connection (at most {@code maxConnections}); READ payloads go out with
 * {@code sendfile}. Embedded use:
 *
 * <pre>{@code
 * BlockServer server = BlockServer.builder().root(dir).port(0).build();
 * server.start();
 * int port = server.port();
 * ...
 * server.close();   // stops accepting, lets in-flight requests finish, closes connections
 * }</pre>
 */
public final class BlockServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockServer.class);
  static final long CAPABILITIES = Protocol.CAP_TCP | Protocol.CAP_CRC32C;
  /** Connections turned away at the same time; beyond this they are just closed. */
  private static final int MAX_REJECTING = 8;

  private final Path rootPath;
  private final String bindAddress;
  private final int requestedPort;
  private final byte[] secret;
  private final int maxReadLength;
  private final int maxConnections;
  private final Duration gracePeriod;
  private final Duration handshakeTimeout;

  private final Map<ServerConnection, Thread> connections = new ConcurrentHashMap<>();
  private final AtomicInteger rejecting = new AtomicInteger();
  private final AtomicLong bytesSent = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  private final AtomicLong authFailures = new AtomicLong();
  private final AtomicInteger connectionIds = new AtomicInteger();

  private RootDirectory root;
  private ServerSocketChannel listener;
  private Thread acceptThread;
  private volatile boolean closed;
  private volatile String address;

  private BlockServer(Builder b) {
    this.rootPath = b.root;
    this.bindAddress = b.bindAddress;
    this.requestedPort = b.port;
    this.secret = b.secret == null ? null : b.secret.clone();
    this.maxReadLength = b.maxReadLength;
    this.maxConnections = b.maxConnections;
    this.gracePeriod = b.gracePeriod;
    this.handshakeTimeout = b.handshakeTimeout;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Binds and starts accepting; returns once the port is open. */
  public synchronized BlockServer start() {
    if (listener != null) {
      throw new IllegalStateException("BlockServer already started on " + address);
    }
    try {
      root = new RootDirectory(rootPath);
    } catch (IOException e) {
      throw new GpuDirectException("Cannot serve root " + rootPath + ": " + e.getMessage(), e);
    }
    try {
      listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(bindAddress, requestedPort), 128);
    } catch (IOException e) {
      closeListener();
      throw new GpuDirectException("Cannot listen on " + bindAddress + ":" + requestedPort
          + ": " + e.getMessage(), e);
    }
    address = bindAddress + ":" + port();
    acceptThread = new Thread(this::acceptLoop, "gpudirect-server-accept-" + port());
    acceptThread.setDaemon(true);
    acceptThread.start();
    LOG.info("BlockServer on {} serving {} read-only{}", address, root.path(),
        secret == null ? "" : " (authentication required)");
    return this;
  }

  /** The bound port (the real one when built with port 0). */
  public int port() {
    if (listener == null) {
      throw new IllegalStateException("BlockServer for " + rootPath + " is not started");
    }
    return ((InetSocketAddress) listener.socket().getLocalSocketAddress()).getPort();
  }

  /** host:port this server listens on. */
  public String address() {
    return address;
  }

  public ServerStats stats() {
    return new ServerStats(bytesSent.get(), requests.get(), errors.get(), accepted.get(),
        connections.size(), rejected.get(), authFailures.get());
  }

  /**
   * Stops accepting, lets requests in flight finish within the grace period, then closes
   * every connection. Idempotent.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    closeListener();
    join(acceptThread, TimeUnit.SECONDS.toNanos(5));
    connections.keySet().forEach(ServerConnection::stopReading);
    long deadline = System.nanoTime() + gracePeriod.toNanos();
    for (Thread t : connections.values()) {
      join(t, deadline - System.nanoTime());
    }
    connections.keySet().forEach(ServerConnection::closeNow);
    for (Thread t : connections.values()) {
      join(t, TimeUnit.SECONDS.toNanos(2));
    }
    LOG.info("BlockServer on {} stopped: {}", address, stats());
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel ch;
      try {
        ch = listener.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("Accept failed on {}", address, e);
        }
        continue;
      }
      String peer = ch.socket().getRemoteSocketAddress().toString();
      try {
        ch.socket().setTcpNoDelay(true);
        if (connections.size() >= maxConnections) {
          reject(ch, peer);
          continue;
        }
        accepted.incrementAndGet();
        ServerConnection conn = new ServerConnection(this, ch, peer);
        Thread t = new Thread(conn, "gpudirect-server-conn-" + connectionIds.incrementAndGet());
        t.setDaemon(true);
        connections.put(conn, t);
        if (closed) {
          connections.remove(conn);
          ch.close();
          return;
        }
        t.start();
      } catch (IOException | RuntimeException e) {
        LOG.warn("Cannot serve connection from {}", peer, e);
        closeQuietly(ch);
      }
    }
  }

  /** Over the connection limit: say so in protocol terms, then close. */
  private void reject(SocketChannel ch, String peer) {
    rejected.incrementAndGet();
    LOG.warn("Rejecting {}: {} connections open (maxConnections)", peer, maxConnections);
    if (rejecting.incrementAndGet() > MAX_REJECTING) {
      rejecting.decrementAndGet();
      closeQuietly(ch);
      return;
    }
    Thread t = new Thread(() -> {
      try {
        ByteBuffer magic = ByteBuffer.wrap(Protocol.MAGIC);
        ByteBuffer error = Frames.encode(new ErrorResponse(ErrorResponse.CONNECTION,
            ErrorCode.LIMIT_EXCEEDED, "Server " + address + " has reached its limit of "
                + maxConnections + " connections; retry later or raise maxConnections"));
        while (magic.hasRemaining()) {
          ch.write(magic);
        }
        while (error.hasRemaining()) {
          ch.write(error);
        }
        ch.shutdownOutput();
        // Drain what the client already sent so closing does not reset the connection
        // before it has read the error.
        ch.socket().setSoTimeout(1000);
        byte[] sink = new byte[4096];
        var in = ch.socket().getInputStream();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < deadline && in.read(sink) >= 0) {
          // discard
        }
      } catch (IOException ignored) {
        // the client is gone already
      } finally {
        closeQuietly(ch);
        rejecting.decrementAndGet();
      }
    }, "gpudirect-server-reject");
    t.setDaemon(true);
    t.start();
  }

  void connectionEnded(ServerConnection conn) {
    connections.remove(conn);
  }

  RootDirectory root() {
    return root;
  }

  byte[] secret() {
    return secret;
  }

  int maxReadLength() {
    return maxReadLength;
  }

  Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  void countBytesSent(long n) {
    bytesSent.addAndGet(n);
  }

  void countRequest() {
    requests.incrementAndGet();
  }

  void countError() {
    errors.incrementAndGet();
  }

  void countAuthFailure() {
    authFailures.incrementAndGet();
    errors.incrementAndGet();
  }

  private void closeListener() {
    if (listener != null) {
      closeQuietly(listener);
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // nothing left to do
    }
  }

  private static void join(Thread t, long nanos) {
    if (t == null || nanos <= 0) {
      return;
    }
    try {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Settings of a {@link BlockServer}; {@link #root} is required. */
  public static final class Builder {
    private Path root;
    private String bindAddress = "127.0.0.1";
    private int port = 7337;
    private byte[] secret;
    private int maxReadLength = Protocol.DEFAULT_MAX_READ_LENGTH;
    private int maxConnections = 256;
    private Duration gracePeriod = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(10);

    private Builder() {}

    /** The directory served, read-only. */
    public Builder root(Path root) {
      this.root = root;
      return this;
    }

    public Builder bindAddress(String bindAddress) {
      this.bindAddress = bindAddress;
      return this;
    }

    /** 0 picks a free port; see {@link BlockServer#port()}. Default 7337. */
    public Builder port(int port) {
      this.port = port;
      return this;
    }

    /** Shared secret clients must prove they know; null (the default) for none. */
    public Builder secret(byte[] secret) {
      this.secret = secret == null ? null : secret.clone();
      return this;
    }

    /** Largest READ accepted, in bytes; default 64 MiB. */
    public Builder maxReadLength(int maxReadLength) {
      this.maxReadLength = maxReadLength;
      return this;
    }

    public Builder maxConnections(int maxConnections) {
      this.maxConnections = maxConnections;
      return this;
    }

    /** How long {@link BlockServer#close()} waits for requests in flight; default 5 s. */
    public Builder shutdownGracePeriod(Duration gracePeriod) {
      this.gracePeriod = gracePeriod;
      return this;
    }

    /** How long a new connection may take to complete the handshake; default 10 s. */
    public Builder handshakeTimeout(Duration handshakeTimeout) {
      this.handshakeTimeout = handshakeTimeout;
      return this;
    }

    public BlockServer build() {
      check(root != null, "root is required");
      check(port >= 0 && port <= 65535, "port must be 0..65535: " + port);
      check(secret == null || secret.length > 0, "secret must not be empty (use null for none)");
      check(maxReadLength > 0, "maxReadLength must be positive: " + maxReadLength);
      check(maxConnections > 0, "maxConnections must be positive: " + maxConnections);
      check(!gracePeriod.isNegative(), "shutdownGracePeriod must not be negative");
      check(!handshakeTimeout.isNegative() && !handshakeTimeout.isZero(),
          "handshakeTimeout must be positive");
      return new BlockServer(this);
    }

    private static void check(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException("Cannot build BlockServer: " + message);
      }
    }
  }
}
