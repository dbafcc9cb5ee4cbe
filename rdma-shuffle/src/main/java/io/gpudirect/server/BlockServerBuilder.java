package io.gpudirect.server;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Settings of a {@link BlockServer}, checked when it is built; a {@link #root} or
 * {@link #shuffleDirectories} (or both) is required. From {@link BlockServer#builder()}.
 */
public final class BlockServerBuilder {
  /** What a client without TLS is told to do unless the server is told otherwise: the read path's and CLI's words. */
  public static final String TLS_ADVICE = "set the option tls=true (CLI: --tls), with tls.trustStore naming its"
      + " certificate";

  Path root;
  java.util.List<Path> shuffleDirectories = java.util.List.of();
  int shuffleSubDirectories = ShuffleDirectories.SPARK_SUB_DIRECTORIES;
  ChecksumAlgorithm shuffleChecksums;
  String bindAddress = "127.0.0.1";
  int port = 7337;
  byte[] secret;
  int maxReadLength = Protocol.DEFAULT_MAX_READ_LENGTH;
  long checksumCacheBlocks = BlockServer.DEFAULT_CHECKSUM_CACHE_BLOCKS;
  int maxConnections = 256;
  int maxUnauthenticated = 64;
  int maxUnauthenticatedPerAddress = 16;
  Duration gracePeriod = Duration.ofSeconds(5);
  Duration handshakeTimeout = Duration.ofSeconds(10);
  RdmaMode rdmaMode = RdmaMode.OFF;
  Supplier<Verbs> verbs;
  RdmaProvider rdmaProvider = RdmaProvider.AUTO;
  RdmaService.Settings rdmaSettings = RdmaService.Settings.defaults();
  javax.net.ssl.SSLContext tls;
  String tlsAdvice = TLS_ADVICE;
  int maxListPageEntries = BlockServer.DEFAULT_LIST_PAGE_ENTRIES;
  int maxConcurrentListings = defaultConcurrentListings();
  Duration listingQueueTimeout = Duration.ofSeconds(10);
  /** Tests only: the failed-login table's size, and the clock of its backoff. */
  int maxLoginNetworks = LoginThrottle.MAX_NETWORKS;
  LongSupplier loginClock = System::nanoTime;

  BlockServerBuilder() {}

  /** Tests only: a smaller failed-login table, and a clock they move by hand. */
  BlockServerBuilder loginThrottle(int maxNetworks, LongSupplier clock) {
    this.maxLoginNetworks = maxNetworks;
    this.loginClock = clock;
    return this;
  }

  /**
   * Most entries in one LIST page, and most names one page looks at, files or not; default
   * 10,000. A page's walk keeps about this many names and entries in memory (and at most one
   * frame, 1 MiB, of them); a smaller page costs more pages, and each page reads every name of
   * the directories it enters, once.
   */
  public BlockServerBuilder maxListPageEntries(int entries) {
    this.maxListPageEntries = entries;
    return this;
  }

  /**
   * Most listing pages walked at once, server-wide; default half the cores, at least 1.
   * Further LISTs wait their turn (see {@link #listingQueueTimeout}).
   */
  public BlockServerBuilder maxConcurrentListings(int listings) {
    this.maxConcurrentListings = listings;
    return this;
  }

  /** How long a LIST waits for a listing slot before it is refused; default 10 s. */
  public BlockServerBuilder listingQueueTimeout(Duration timeout) {
    this.listingQueueTimeout = timeout;
    return this;
  }

  static int defaultConcurrentListings() {
    return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  }

  /** Whether to serve RDMA too; default {@link RdmaMode#OFF} (the CLI defaults to auto). */
  public BlockServerBuilder rdma(RdmaMode mode) {
    this.rdmaMode = mode;
    return this;
  }

  /**
   * The verbs provider RDMA runs on; default {@link RdmaProvider#AUTO}: UCX when libucp loads,
   * else DiSNI. With {@link RdmaMode#AUTO} UCX serves only over its RDMA transports (verbs);
   * with {@link RdmaMode#ON} over whatever it has, TCP and shared memory included.
   */
  public BlockServerBuilder rdmaProvider(RdmaProvider provider) {
    this.rdmaProvider = provider;
    return this;
  }

  /** The provider by name, as {@code --rdma-provider} gives it: auto, ucx or disni, in any case. */
  public BlockServerBuilder rdmaProvider(String provider) {
    return rdmaProvider(RdmaProvider.parse(provider));
  }

  /** These verbs instead of a provider's (tests: a double, or real verbs wrapped). */
  public BlockServerBuilder verbs(Supplier<Verbs> verbs) {
    this.verbs = verbs;
    return this;
  }

  public BlockServerBuilder rdmaSettings(RdmaService.Settings settings) {
    this.rdmaSettings = settings;
    return this;
  }

  /**
   * Serve TLS only, with this context's certificate
   * ({@link io.gpudirect.tls.TlsContexts#server}); null (the default) for plaintext.
   * A plaintext client is answered with an error that says TLS is required.
   */
  public BlockServerBuilder tls(javax.net.ssl.SSLContext tls) {
    this.tls = tls;
    return this;
  }

  /**
   * What a client that does not speak TLS is told to do, after "Server H:P requires TLS: ": by
   * default {@value #TLS_ADVICE}. A server whose clients turn TLS on elsewhere names that (an
   * executor's shuffle server: the shuffle's Spark settings).
   */
  public BlockServerBuilder tlsAdvice(String advice) {
    this.tlsAdvice = advice;
    return this;
  }

  /**
   * Serves the shuffle files of one Spark executor, read-only, by block (SHUFFLE_READ): its
   * block manager's local directories ({@code blockmgr-UUID} under each {@code spark.local.dir}),
   * in the block manager's order, and its {@code spark.diskStore.subDirectories} (64 by default).
   * Nothing else in them can be read: requests name shuffle, map and reduce ids, never a path.
   * Without a {@link #root} as well, READ, STAT and LIST are refused.
   */
  public BlockServerBuilder shuffleDirectories(java.util.List<Path> localDirectories, int subDirectories) {
    this.shuffleDirectories = java.util.List.copyOf(localDirectories);
    this.shuffleSubDirectories = subDirectories;
    return this;
  }

  /**
   * The algorithm of the partition checksums Spark's shuffle writers keep beside the map outputs
   * ({@code spark.shuffle.checksum.algorithm} where {@code spark.shuffle.checksum.enabled}), or
   * null (the default) for none. With it, a block's answer carries the writer's checksums of its
   * partitions, and the server computes no CRC32C of its bytes; where a map output has no usable
   * checksum file, its blocks are answered with CRC32C as without it.
   */
  public BlockServerBuilder shuffleChecksums(ChecksumAlgorithm algorithm) {
    this.shuffleChecksums = algorithm;
    return this;
  }

  /** The directory served, read-only. */
  public BlockServerBuilder root(Path root) {
    this.root = root;
    return this;
  }

  public BlockServerBuilder bindAddress(String bindAddress) {
    this.bindAddress = bindAddress;
    return this;
  }

  /** 0 picks a free port; see {@link BlockServer#port()}. Default 7337. */
  public BlockServerBuilder port(int port) {
    this.port = port;
    return this;
  }

  /** Shared secret clients must prove they know; null (the default) for none. */
  public BlockServerBuilder secret(byte[] secret) {
    this.secret = secret == null ? null : secret.clone();
    return this;
  }

  /** Largest READ accepted, in bytes; default 64 MiB. */
  /**
   * How many 64 KiB blocks' checksums the server keeps (8 bytes each; the default, 4 Mi,
   * covers 256 GiB of files in 32 MiB of heap), so that data read again is not read a
   * second time to checksum it. 0 turns the cache off.
   */
  public BlockServerBuilder checksumCacheBlocks(long blocks) {
    this.checksumCacheBlocks = blocks;
    return this;
  }

  public BlockServerBuilder maxReadLength(int maxReadLength) {
    this.maxReadLength = maxReadLength;
    return this;
  }

  /** Connections past their handshake served at once; default 256. Beyond: LIMIT_EXCEEDED. */
  public BlockServerBuilder maxConnections(int maxConnections) {
    this.maxConnections = maxConnections;
    return this;
  }

  /**
   * Connections still in their handshake (not yet authenticated) at once, on top of
   * {@link #maxConnections}; default 64. When full, a new connection is still taken in and
   * the oldest of these is closed (see {@link io.gpudirect.server.peers.PendingPeers#admit}).
   */
  public BlockServerBuilder maxUnauthenticated(int maxUnauthenticated) {
    this.maxUnauthenticated = maxUnauthenticated;
    return this;
  }

  /**
   * Of {@link #maxUnauthenticated}, at most this many from one address (an IPv6 /64);
   * default 16. A new one from an address at its limit closes that address's oldest.
   */
  public BlockServerBuilder maxUnauthenticatedPerAddress(int maxUnauthenticatedPerAddress) {
    this.maxUnauthenticatedPerAddress = maxUnauthenticatedPerAddress;
    return this;
  }

  /** How long {@link BlockServer#close()} lets clients finish reads in flight; default 5 s. */
  public BlockServerBuilder shutdownGracePeriod(Duration gracePeriod) {
    this.gracePeriod = gracePeriod;
    return this;
  }

  /**
   * How long a new connection may take, from accept, to complete the whole handshake (TLS,
   * HELLO and authentication together); default 10 s. It is then closed, however its bytes
   * were arriving.
   */
  public BlockServerBuilder handshakeTimeout(Duration handshakeTimeout) {
    this.handshakeTimeout = handshakeTimeout;
    return this;
  }

  public BlockServer build() {
    check(root != null || !shuffleDirectories.isEmpty(), "a root or shuffle directories are required");
    check(shuffleSubDirectories > 0, "shuffle sub-directories must be positive: " + shuffleSubDirectories);
    check(port >= 0 && port <= 65535, "port must be 0..65535: " + port);
    if (secret != null) {
      ServerSecret.checkLength(secret, "secret given to BlockServerBuilder.secret",
          "/etc/gpudirect/secret");
    }
    check(maxReadLength >= Protocol.MIN_MAX_READ_LENGTH, "maxReadLength must be at least "
        + Protocol.MIN_MAX_READ_LENGTH + ": " + maxReadLength);
    check(checksumCacheBlocks >= 0, "checksumCacheBlocks must not be negative: " + checksumCacheBlocks);
    check(maxConnections > 0, "maxConnections must be positive: " + maxConnections);
    check(maxUnauthenticated > 0, "maxUnauthenticated must be positive: " + maxUnauthenticated);
    check(maxUnauthenticatedPerAddress > 0 && maxUnauthenticatedPerAddress <= maxUnauthenticated,
        "maxUnauthenticatedPerAddress must be 1.." + maxUnauthenticated + ": "
            + maxUnauthenticatedPerAddress);
    check(!gracePeriod.isNegative(), "shutdownGracePeriod must not be negative");
    check(!handshakeTimeout.isNegative() && !handshakeTimeout.isZero(),
        "handshakeTimeout must be positive");
    check(tlsAdvice != null && !tlsAdvice.isBlank(), "tlsAdvice must say how a client turns TLS on");
    check(maxListPageEntries > 0, "maxListPageEntries must be positive: " + maxListPageEntries);
    check(maxConcurrentListings > 0,
        "maxConcurrentListings must be positive: " + maxConcurrentListings);
    check(listingQueueTimeout != null && !listingQueueTimeout.isNegative(),
        "listingQueueTimeout must not be negative");
    return new BlockServer(this);
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("Cannot build BlockServer: " + message);
    }
  }
}
