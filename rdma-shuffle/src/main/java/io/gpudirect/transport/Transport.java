package io.gpudirect.transport;

import java.net.InetSocketAddress;

/**
 * A way to carry gpudirect requests: TCP ({@code transport.tcp}) or RDMA
 * ({@code transport.rdma}, over the verbs seam in {@code verbs}). The client chooses one.
 */
public interface Transport {
  /** "tcp" or "rdma", as reported in logs and metrics. */
  String name();

  /** Whether its connections offer {@link Connection#deviceReads}. */
  default boolean readsIntoDevice() {
    return false;
  }

  /**
   * The most a window of a shuffle block asks for ({@link Connection#readBlock}), given the
   * server's largest answer and the client's chunk (at most that): the server's, where memory
   * is bound once the answer has told the window's length (TCP reads it off the socket).
   */
  default int blockWindow(int maxReadLength, int chunkLength) {
    return maxReadLength;
  }

  /**
   * Opens one connection, handshake and authentication done. Throws
   * {@link TransportException} when the server cannot be reached (worth retrying) and
   * {@link AuthenticationException} or another {@link io.gpudirect.GpuDirectException} when
   * retrying cannot help.
   */
  Connection connect(InetSocketAddress server, ConnectionOptions options);
}
