package io.gpudirect.shuffle.server;

import io.gpudirect.GpuDirectException;
import io.gpudirect.server.BlockServer;
import java.nio.file.Path;
import java.util.List;

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
   * Starts serving {@code localDirectories} (the block manager's, in its order) with
   * {@code subDirectories} each ({@code spark.diskStore.subDirectories}), on {@code host}, to
   * clients that prove they hold {@code secret}.
   */
  public static ExecutorShuffleServer start(List<Path> localDirectories, int subDirectories, String host,
      byte[] secret) {
    try {
      return new ExecutorShuffleServer(BlockServer.builder()
          .shuffleDirectories(localDirectories, subDirectories)
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

  /** host:port, for logs. */
  public String address() {
    return server.address();
  }

  /** Stops serving; reducers still fetching from it fail as their server lost. */
  @Override
  public void close() {
    server.close();
  }
}
