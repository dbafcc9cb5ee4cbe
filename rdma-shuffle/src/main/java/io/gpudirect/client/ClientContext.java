package io.gpudirect.client;

import io.gpudirect.transport.ConnectionThreads;

/**
 * What the clients of one embedding share, created and closed by that embedding: the threads
 * their connections check checksums and handshake deadlines on ({@link ConnectionThreads}).
 * An application that runs clients and a server in one JVM gives each side its own; Spark
 * executors, the CLI and clients made without one use {@link #shared()}, the JVM's.
 */
public final class ClientContext implements AutoCloseable {
  private static ClientContext shared;

  private final ConnectionThreads threads = new ConnectionThreads();
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

  public ConnectionThreads connectionThreads() {
    return threads;
  }

  /** Stops the threads; close the clients first, whose connections use them. */
  @Override
  public void close() {
    closed = true;
    threads.close();
  }
}
