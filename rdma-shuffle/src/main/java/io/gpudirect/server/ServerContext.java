package io.gpudirect.server;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.server.peers.RefusalLog;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.verbs.Verbs;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

/**
 * What every connection of one started server shares, made once by {@link BlockServer#start()}
 * and handed to each: the root, the counters, the limits, the logs of refusals and logins, the
 * connections themselves, the checksum threads and caches, TLS and RDMA.
 *
 * @param address host:port the server listens on, as every message names it
 * @param root the directory READ, STAT and LIST resolve paths in; null on a server of shuffle
 *     files only (see {@link #root()})
 * @param shuffle the executor's shuffle directories SHUFFLE_READ finds blocks in, or null
 * @param secret the shared secret clients must prove, or null for none
 * @param tls the context connections are wrapped in, or null for plaintext
 * @param tlsAdvice what a client that does not speak TLS is told to do, where {@code tls} is set
 * @param memory where connections charge their direct buffers while they run
 * @param stats the server's counters with its connections and uptime, as STATUS answers them
 * @param refusals where connections closed before authenticating are counted, and logged in sum
 * @param logins failed logins by address, and the backoff they earn
 * @param checksums the CRC32Cs of large reads, computed beside their sendfile
 * @param blockChecksums the CRC32C of every 64 KiB block read so far
 * @param rdma the RDMA side, or null when the server does not serve RDMA
 * @param rdmaStatus whether RDMA is served and how, or why not, in words
 */
record ServerContext(String address, RootDirectory root, ShuffleDirectories shuffle, byte[] secret,
    SSLContext tls, String tlsAdvice, BufferAllocator memory, Limits limits, ServerCounters counters,
    Supplier<ServerStats> stats, ServedConnections connections,
    RefusalLog refusals, LoginThrottle logins, ListingSlots listingSlots, Checksums checksums,
    BlockChecksums blockChecksums, RdmaService rdma, String rdmaStatus) {

  /**
   * @param maxReadLength most bytes one READ may ask for
   * @param maxListPageEntries most entries one LIST page holds
   */
  record Limits(int maxReadLength, int maxListPageEntries) {}

  /**
   * The root READ, STAT and LIST resolve paths in; refused, naming what this server serves
   * instead, on a server of shuffle files only.
   */
  @Override
  public RootDirectory root() {
    if (root == null) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST, "Gpudirect server " + address
          + " serves shuffle blocks only (SHUFFLE_READ), no files by path");
    }
    return root;
  }

  /** The executor's shuffle directories; refused on a server that has none. */
  ShuffleDirectories shuffleDirectories() {
    if (shuffle == null) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST, "Gpudirect server " + address
          + " serves no shuffle directories; only a server started for a Spark executor's shuffle"
          + " files answers SHUFFLE_READ");
    }
    return shuffle;
  }

  /** What this server serves, in words: its root, its shuffle directories, or both. */
  String servedFiles() {
    String files = root == null ? null : root.path().toString();
    String blocks = shuffle == null ? null : "the shuffle files of " + shuffle.describe();
    return files == null ? blocks : blocks == null ? files : files + " and " + blocks;
  }

  /** What this server offers in HELLO_ACK, before the client's capabilities are taken in. */
  long capabilities() {
    return rdma == null ? BlockServer.TCP_CAPABILITIES : BlockServer.TCP_CAPABILITIES | rdmaCapability();
  }

  /** The RDMA bit this server sets: which kind of listener its verbs provider runs. */
  long rdmaCapability() {
    return rdma != null && rdma.wire() == Verbs.Wire.UCX ? Protocol.CAP_RDMA_UCX : Protocol.CAP_RDMA;
  }
}
