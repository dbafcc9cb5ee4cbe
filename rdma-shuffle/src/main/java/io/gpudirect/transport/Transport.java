package io.gpudirect.transport;

import java.net.InetSocketAddress;

/**
 * A way to carry gpudirect requests: TCP now ({@code transport.tcp}), RDMA later
 * ({@code transport.rdma}, the only package that will import DiSNI).
 */
public interface Transport {
  /** "tcp" or "rdma", as reported in logs and metrics. */
  String name();

  /**
   * Opens one connection, handshake and authentication done. Throws
   * {@link TransportException} when the server cannot be reached (worth retrying) and
   * {@link AuthenticationException} or another {@link io.gpudirect.GpuDirectException} when
   * retrying cannot help.
   */
  Connection connect(InetSocketAddress server, ConnectionOptions options);
}
