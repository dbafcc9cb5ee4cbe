package io.gpudirect.shuffle.server;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLContext;

/**
 * The shuffle server of one executor: a {@link BlockServer} over its block manager's local
 * directories, serving its map outputs by block to the application's reducers and nothing else,
 * on a free port of the block manager's host. Started by the shuffle manager's Spark adapter at
 * the executor's first map task and closed when the executor stops; this is the one launcher
 * of a server that executors run, so the adapter itself never touches the server's classes.
 */
public final class ExecutorShuffleServer implements AutoCloseable {
  private final BlockServer server;

  private ExecutorShuffleServer(BlockServer server) {
    this.server = server;
  }

  /**
   * How the server is reached besides TCP.
   *
   * @param transport the reducers' transport, auto, tcp or rdma: the server serves RDMA too where
   *     they may ask for it, with {@code auto} only where the provider finds RDMA (UCX with a verbs
   *     transport, DiSNI with a device), with {@code rdma} over whatever it has (UCX over TCP included)
   * @param rdmaProvider auto, ucx or disni
   * @param tls its TLS context, or null for plaintext
   * @param tlsAdvice what a reducer without TLS is told to set (the shuffle's settings), or null
   *     for the server's default (see {@link io.gpudirect.server.BlockServerBuilder#tlsAdvice})
   */
  public record Transport(String transport, String rdmaProvider, SSLContext tls, String tlsAdvice) {
    public static final Transport TCP = new Transport("tcp", "auto", null);

    public Transport(String transport, String rdmaProvider, SSLContext tls) {
      this(transport, rdmaProvider, tls, null);
    }

    RdmaMode rdma() {
      return switch (transport) {
        case "tcp" -> RdmaMode.OFF;
        case "rdma" -> RdmaMode.ON;
        default -> RdmaMode.AUTO;
      };
    }
  }

  /**
   * Starts serving {@code localDirectories} (the block manager's, in its order) with
   * {@code subDirectories} each ({@code spark.diskStore.subDirectories}), on {@code host}, to
   * clients that prove they hold {@code secret}, over {@code transport}.
   */
  public static ExecutorShuffleServer start(List<Path> localDirectories, int subDirectories, String host,
      byte[] secret, Transport transport) {
    return start(localDirectories, subDirectories, host, secret, transport, null);
  }

  /**
   * As {@link #start(List, int, String, byte[], Transport)}, answering blocks with the partition
   * checksums that Spark's writers keep beside the map outputs, of {@code checksumAlgorithm}
   * (Spark's name, as {@code spark.shuffle.checksum.algorithm} gives it), instead of a CRC32C
   * computed by reading each block's bytes a second time; null, or an algorithm not known here,
   * for CRC32C alone.
   */
  public static ExecutorShuffleServer start(List<Path> localDirectories, int subDirectories, String host,
      byte[] secret, Transport transport, String checksumAlgorithm) {
    try {
      return new ExecutorShuffleServer(BlockServer.builder()
          .shuffleDirectories(localDirectories, subDirectories)
          .shuffleChecksums(checksumAlgorithm == null ? null : ChecksumAlgorithm.ofSparkName(checksumAlgorithm))
          .rdma(transport.rdma()).rdmaProvider(transport.rdmaProvider()).tls(transport.tls())
          .tlsAdvice(transport.tlsAdvice() != null ? transport.tlsAdvice() : BlockServerBuilder.TLS_ADVICE)
          .bindAddress(host).port(0).secret(secret).build().start());
    } catch (RuntimeException e) {
      throw new GpuDirectException("Cannot start this executor's gpudirect shuffle server on " + host
          + " over " + localDirectories + ": " + e.getMessage(), e);
    }
  }

  /** The port reducers reach it on. */
  public int port() {
    return server.port();
  }

  /** host:port and what it serves over, for logs. */
  public String address() {
    return server.address() + " (" + server.transports() + (server.tlsEnabled() ? ", TLS" : "") + "; "
        + server.rdmaStatus() + ")";
  }

  /** Stops serving; reducers still fetching from it fail as their server lost. */
  @Override
  public void close() {
    server.close();
  }
}
