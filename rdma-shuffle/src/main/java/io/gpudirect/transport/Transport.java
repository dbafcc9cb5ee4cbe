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
   * Opens one connection, handshake and authentication done. Throws
   * {@link TransportException} when the server cannot be reached (worth retrying) and
   * {@link AuthenticationException} or another {@link io.gpudirect.GpuDirectException} when
   * retrying cannot help.
   */
  Connection connect(InetSocketAddress server, ConnectionOptions options);
}
