package io.gpudirect.server;

import io.gpudirect.DaemonThreads;
import io.gpudirect.server.peers.PendingPeers;
import io.gpudirect.server.peers.RefusalLog;
import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.TcpFallbackNotice;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
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
 * server.close();   // stops accepting, lets in-flight reads finish, closes connections
 * }</pre>
 *
 * <p>While it runs, its counters are in JMX as {@code io.gpudirect:type=BlockServer,port=PORT}
 * ({@link BlockServerMXBean}) and answer the protocol's STATUS request.
 */
public final class BlockServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockServer.class);
  static final long DEFAULT_CHECKSUM_CACHE_BLOCKS = 4L << 20;
  static final long TCP_CAPABILITIES = Protocol.CAP_TCP | Protocol.CAP_CRC32C;
  /**
   * While draining, a connection that has answered its last request this long ago and has
   * no new one is closed. A client in the middle of a read pipelines its chunk requests
   * back to back, so its connections are never idle this long until the read is done.
   */
  static final long DRAIN_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  /**
   * A connection that has read nothing for this long closes the files it kept open (see
   * {@link OpenFiles}), so that an idle client does not hold a deleted file's disk blocks.
   */
  static final long OPEN_FILES_IDLE_NANOS = TimeUnit.SECONDS.toNanos(2);
  static final int DEFAULT_LIST_PAGE_ENTRIES = 10_000;
  /** How often connections closed before authenticating, and failed logins, are logged, summed up. */

  /** Null for a server of shuffle files only. */
  private final Path rootPath;
  private final java.util.List<Path> shuffleDirectoryPaths;
  private final int shuffleSubDirectories;
  private final ChecksumAlgorithm shuffleChecksums;
  private final String bindAddress;
  private final int requestedPort;
  private final byte[] secret;
  private final int maxReadLength;
  private final BlockChecksums blockChecksums;
  private final int maxConnections;
  private final int maxUnauthenticated;
  private final int maxUnauthenticatedPerAddress;
  private final Duration gracePeriod;
  private final Duration handshakeTimeout;
  private final RdmaMode rdmaMode;
  private final Supplier<Verbs> verbs;
  private final RdmaProvider rdmaProvider;
  private final RdmaService.Settings rdmaSettings;
  private final javax.net.ssl.SSLContext tls;
  private final String tlsAdvice;
  private final int maxListPageEntries;
  private final ListingSlots listingSlots;
  private final int maxLoginNetworks;
  private final java.util.function.LongSupplier loginClock;

  private final ServerCounters counters = new ServerCounters();
  private final AtomicInteger connectionIds = new AtomicInteger();

  private RootDirectory root;
  private ShuffleDirectories shuffle;
  private ServerSocketChannel listener;
  private Thread acceptThread;
  /**
   * One thread for the server's timers: handshake deadlines, closing idle connections' open
   * files (see {@link #OPEN_FILES_IDLE_NANOS}), the log summaries.
   */
  private ScheduledThreadPoolExecutor timers;
  /** The CRC32Cs of large reads, computed beside their sendfile. */
  private Checksums checksums;
  /**
   * What the server holds in direct memory besides RDMA's: each connection's request buffer and
   * small-answer buffer, the checksum tasks' slices. Closed with the server.
   */
  private BufferAllocator memory;
  private ServedConnections connections;
  private LimitRefusals limitRefusals;
  private RefusalLog refusals;
  private LoginThrottle logins;
  /** What every connection shares; made once started. */
  private ServerContext context;
  private volatile boolean closed;
  private volatile String address;
  private volatile long startedNanos;
  private BlockServerJmx jmx;
  private RdmaService rdma;
  private volatile String rdmaStatus = "rdma off";

  BlockServer(BlockServerBuilder b) {
    this.rootPath = b.root;
    this.shuffleDirectoryPaths = b.shuffleDirectories;
    this.shuffleSubDirectories = b.shuffleSubDirectories;
    this.shuffleChecksums = b.shuffleChecksums;
    this.bindAddress = b.bindAddress;
    this.requestedPort = b.port;
    this.secret = b.secret == null ? null : b.secret.clone();
    this.maxReadLength = b.maxReadLength;
    this.blockChecksums = new BlockChecksums(b.checksumCacheBlocks);
    this.maxConnections = b.maxConnections;
    this.maxUnauthenticated = b.maxUnauthenticated;
    this.maxUnauthenticatedPerAddress = b.maxUnauthenticatedPerAddress;
    this.gracePeriod = b.gracePeriod;
    this.handshakeTimeout = b.handshakeTimeout;
    this.rdmaMode = b.rdmaMode;
    this.verbs = b.verbs;
    this.rdmaProvider = b.rdmaProvider;
    this.rdmaSettings = b.rdmaSettings;
    this.tls = b.tls;
    this.tlsAdvice = b.tlsAdvice;
    this.maxListPageEntries = b.maxListPageEntries;
    this.listingSlots = new ListingSlots(b.maxConcurrentListings, b.listingQueueTimeout);
    this.maxLoginNetworks = b.maxLoginNetworks;
    this.loginClock = b.loginClock;
  }

  public static BlockServerBuilder builder() {
    return new BlockServerBuilder();
  }

  /** Binds and starts accepting; returns once the port is open. */
  public synchronized BlockServer start() {
    if (listener != null) {
      throw new IllegalStateException("BlockServer already started on " + address);
    }
    try {
      root = rootPath == null ? null : new RootDirectory(rootPath);
    } catch (IOException e) {
      throw new GpuDirectException("Cannot serve root " + rootPath + ": " + e.getMessage()
          + "; pass --root an existing directory this user can read", e);
    }
    try {
      shuffle = shuffleDirectoryPaths.isEmpty() ? null
          : ShuffleDirectories.open(shuffleDirectoryPaths, shuffleSubDirectories, shuffleChecksums);
    } catch (RuntimeException e) {
      closeDirectories();
      throw e;
    }
    try {
      listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(bindAddress, requestedPort), 128);
    } catch (IOException | UnresolvedAddressException | UnsupportedAddressTypeException e) {
      closeListener();
      closeDirectories();
      throw new GpuDirectException("Cannot listen on " + bindAddress + ":" + requestedPort + ": "
          + whyNotListening(e), e);
    }
    address = bindAddress + ":" + port();
    refusals = new RefusalLog(address);
    memory = BufferAllocator.root().newChildAllocator("server " + address, Long.MAX_VALUE);
    startRdma();
    startedNanos = System.nanoTime();
    checksums = new Checksums(memory);
    timers = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("gpudirect-server-timers-" + port()));
    // A deadline is cancelled as soon as its handshake ends: drop it then, not 10 s later.
    timers.setRemoveOnCancelPolicy(true);
    // Connections that have not finished their handshake (TLS, HELLO and the proof) yet.
    PendingPeers<ServerConnection> pending = new PendingPeers<>("handshake", "finish its handshake",
        maxUnauthenticated, maxUnauthenticatedPerAddress, handshakeTimeout, timers, refusals,
        ServerConnection::peer, ServerConnection::closeNow);
    connections = new ServedConnections(pending, maxConnections, counters);
    logins = new LoginThrottle(address, maxLoginNetworks, loginClock);
    limitRefusals = new LimitRefusals(address, maxConnections, counters, refusals);
    context = new ServerContext(address, root, shuffle, secret, tls, tlsAdvice, memory,
        new ServerContext.Limits(maxReadLength, maxListPageEntries), counters, this::stats, connections,
        refusals, logins, listingSlots, checksums, blockChecksums, rdma, rdmaStatus);
    jmx = BlockServerJmx.register(this);
    long sweep = OPEN_FILES_IDLE_NANOS / 2;
    timers.scheduleWithFixedDelay(this::closeIdleFiles, sweep, sweep, TimeUnit.NANOSECONDS);
    long summary = RefusalLog.SUMMARY_INTERVAL.toNanos();
    timers.scheduleWithFixedDelay(this::logSummaries, summary, summary, TimeUnit.NANOSECONDS);
    acceptThread = new Thread(this::acceptLoop, "gpudirect-server-accept-" + port());
    acceptThread.setDaemon(true);
    acceptThread.start();
    LOG.info("BlockServer on {} serving {} read-only over {}; TLS {}; authentication {}; counters in JMX {}",
        address, context.servedFiles(), transports(), tls == null ? "off" : "on", secret == null ? "off" : "on",
        jmx.name() == null ? "not registered" : "as " + jmx.name());
    warnIfOpenToAnyone();
    if (!RequestedPath.FILE_NAMES.equals(java.nio.charset.StandardCharsets.UTF_8)) {
      LOG.warn("BlockServer on {} turns file names into bytes as {} (from its locale), so names"
          + " with other characters are refused; start it with a UTF-8 locale (LC_ALL=C.UTF-8)",
          address, RequestedPath.FILE_NAMES);
    }
    return this;
  }

  /** Words for a failed bind: the JDK's own where it has some (two of its exceptions have none). */
  private static String whyNotListening(Exception e) {
    if (e instanceof UnresolvedAddressException) {
      return "no such address; pass --bind an address of this host";
    }
    if (e instanceof UnsupportedAddressTypeException) {
      return "this JVM cannot use that kind of address (an IPv6 one, where it found no IPv6);"
          + " pass --bind another address of this host";
    }
    return e.getMessage();
  }

  /**
   * Loudly, at start, when anyone who can reach the port may read every file: bound beyond
   * loopback, and no secret asked (TLS without one encrypts the bytes, but lets anyone read).
   */
  private void warnIfOpenToAnyone() {
    if (secret != null || ((InetSocketAddress) listener.socket().getLocalSocketAddress()).getAddress()
        .isLoopbackAddress()) {
      return;
    }
    LOG.warn("BlockServer on {} asks no secret and listens beyond loopback: anyone who can reach port {}"
        + " can read every file under {}{}", address, port(), context.servedFiles(),
        tls == null ? "" : " (TLS encrypts what they read; it does not decide who may read)");
    LOG.warn("BlockServer on {}: to let in only clients that know a secret, start it with --secret-file"
        + " FILE (at least 16 random bytes: head -c 32 /dev/urandom | base64 > FILE; clients give the"
        + " same in spark.gpudirect.auth.secret or their --secret-file){}; or serve this host only with"
        + " --bind 127.0.0.1", address, tls != null ? ""
        : ", and with --tls-cert CERT.pem --tls-key KEY.pem so that no one on the way can read the data");
  }

  /**
   * The RDMA listener, on the TCP bind address, when the mode allows and the host can: with
   * {@link RdmaMode#ON} a host that cannot fails the start, saying what is missing; with
   * {@link RdmaMode#AUTO} the reason is logged once and the server serves TCP only.
   */
  private void startRdma() {
    if (rdmaMode == RdmaMode.OFF) {
      rdmaStatus = "rdma off (--rdma off)";
      return;
    }
    try {
      Verbs v;
      if (verbs != null) {
        v = verbs.get();
      } else {
        RdmaProvider.Opened o = rdmaProvider.open(rdmaMode == RdmaMode.AUTO);
        LOG.info("BlockServer on {}: RDMA through {}", address, o.reason());
        v = o.verbs();
      }
      rdma = new RdmaService(v, new InetSocketAddress(bindAddress, 0), rdmaSettings, memory,
          address, refusals);
      rdmaStatus = rdma.describe();
    } catch (RdmaUnavailableException | RdmaException e) {
      if (rdmaMode == RdmaMode.ON) {
        closeListener();
        closeMemory();
        closeDirectories();
        throw new GpuDirectException("Cannot serve RDMA on " + address + " (--rdma on): "
            + e.getMessage(), e);
      }
      if (e instanceof RdmaUnavailableException u) {
        rdmaStatus = "no rdma: " + u.summary();
        TcpFallbackNotice.say(u);
      } else {
        rdmaStatus = "no rdma: " + e.getMessage();
        LOG.info("BlockServer on {} serves TCP only (--rdma auto): {}", address, e.getMessage());
      }
    }
  }

  /** The port of the RDMA listener (UCX or RDMA CM), when RDMA is served. */
  public java.util.OptionalInt rdmaPort() {
    RdmaService r = rdma;
    return r == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(r.port());
  }

  /**
   * RDMA queue pairs connected and not yet bound to a login by their token, now (0 without
   * RDMA): what a flood of strangers holds, within the server's bounds.
   */
  public int unboundQueuePairs() {
    RdmaService r = rdma;
    return r == null ? 0 : r.unboundQueuePairs();
  }

  /** Whether RDMA is served and how, or why not, in words. */
  public String rdmaStatus() {
    return rdmaStatus;
  }

  /** The bound port (the real one when built with port 0). */
  public int port() {
    if (listener == null) {
      throw new IllegalStateException("BlockServer for " + (rootPath != null ? rootPath
          : shuffleDirectoryPaths) + " is not started");
    }
    return ((InetSocketAddress) listener.socket().getLocalSocketAddress()).getPort();
  }

  /** host:port this server listens on. */
  public String address() {
    return address;
  }

  public ServerStats stats() {
    long uptime = startedNanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
    return counters.stats(connections == null ? 0 : connections.size(), uptime);
  }

  /** The transports this server serves, comma-separated, as logged and shown in JMX. */
  public String transports() {
    return rdma == null ? "tcp" : "tcp," + rdma.carrier();
  }

  /** The JMX name of this server's counters, or null when not registered (not started, or refused). */
  public String jmxName() {
    return jmx == null ? null : jmx.name();
  }

  /** True once {@link #close()} began. */
  public boolean isDraining() {
    return closed;
  }

  /**
   * Stops accepting new connections at once, then drains: connections keep being served
   * while their clients keep sending requests (a read in progress), and each is closed once
   * it has been idle for {@link #DRAIN_IDLE_NANOS}. What is still open when the grace period
   * ends is closed. Idempotent; the JMX view goes with it.
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
    if (connections != null && !connections.isEmpty()) {
      LOG.info("BlockServer on {} draining: {} connections, {} reads in flight, grace period {}",
          address, connections.size(), counters.readsInFlight(), gracePeriod);
    }
    long deadline = System.nanoTime() + gracePeriod.toNanos();
    while (connections != null && !connections.isEmpty() && System.nanoTime() < deadline) {
      long now = System.nanoTime();
      for (ServerConnection c : connections.all()) {
        if (c.idleNanos(now) >= DRAIN_IDLE_NANOS) {
          c.stopReading();
        }
      }
      if (!sleep(Math.min(20, TimeUnit.NANOSECONDS.toMillis(Math.max(0, deadline - now)) + 1))) {
        break;
      }
    }
    if (connections != null && !connections.isEmpty()) {
      LOG.warn("BlockServer on {}: grace period {} over; closing {} connections with {} reads in flight",
          address, gracePeriod, connections.size(), counters.readsInFlight());
    }
    if (connections != null) {
      connections.all().forEach(ServerConnection::closeNow);
      for (Thread t : connections.threads()) {
        join(t, TimeUnit.SECONDS.toNanos(2));
      }
    }
    if (timers != null) {
      timers.shutdownNow();
      try {
        timers.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (checksums != null) {
      checksums.close();
    }
    if (rdma != null) {
      rdma.close();
    }
    closeMemory();
    closeDirectories();
    if (jmx != null) {
      jmx.unregister();
    }
    LOG.info("BlockServer on {} stopped: {}", address, stats());
  }

  /** Once connections and checksums are done: what is still charged then is a leak, and said so. */
  private void closeMemory() {
    if (memory == null) {
      return;
    }
    try {
      memory.close();
    } catch (MemoryLeakException e) {
      LOG.warn("BlockServer on {} stopped holding buffers it should have given back: {}", address,
          e.getMessage());
    }
  }

  private void closeIdleFiles() {
    long now = System.nanoTime();
    for (ServerConnection c : connections.all()) {
      c.closeIdleFiles(now, OPEN_FILES_IDLE_NANOS);
    }
    if (shuffle != null) {
      shuffle.closeIdleFiles(now, OPEN_FILES_IDLE_NANOS);
    }
  }

  /** Connections closed before authenticating, and failed logins: a few lines, not one per try. */
  void logSummaries() {
    long now = System.nanoTime();
    refusals.logSummary(now);
    logins.logSummary();
  }

  /** False when interrupted: the caller stops waiting. */
  private static boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
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
      ServerConnection conn = null;
      try {
        ch.socket().setTcpNoDelay(true);
        if (connections.full()) {
          limitRefusals.refuse(ch, peer);
          continue;
        }
        counters.countAccepted();
        InetAddress from = ((InetSocketAddress) ch.getRemoteAddress()).getAddress();
        conn = new ServerConnection(context, ch, peer, from);
        Thread t = new Thread(conn, "gpudirect-server-conn-" + connectionIds.incrementAndGet());
        t.setDaemon(true);
        connections.add(conn, t);
        if (closed) {
          connections.dropped(conn);
          ch.close();
          return;
        }
        connections.admit(conn, from);
        t.start();
      } catch (IOException | RuntimeException e) {
        // A peer gone before it could be served, say: what a flood of connections brings about.
        refusals.cause("could not be served").closed(peer, e.toString());
        LOG.debug("Cannot serve connection from {}", peer, e);
        if (conn != null) {
          connections.dropped(conn);
        }
        closeQuietly(ch);
      }
    }
  }

  private void closeDirectories() {
    if (root != null) {
      root.close();
    }
    if (shuffle != null) {
      shuffle.close();
    }
  }

  /** What every connection of this server shares; null until started. */
  ServerContext context() {
    return context;
  }

  /** Whether connections must use TLS. */
  public boolean tlsEnabled() {
    return tls != null;
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
}
