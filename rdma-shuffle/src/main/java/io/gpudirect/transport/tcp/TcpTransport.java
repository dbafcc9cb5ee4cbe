package io.gpudirect.transport.tcp;

import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import java.net.InetSocketAddress;

/** Requests and payloads over one TCP socket per connection. */
public final class TcpTransport implements Transport {
  private final ConnectionThreads threads;

  /** Its connections check checksums and handshake deadlines on {@code threads}, which the caller owns. */
  public TcpTransport(ConnectionThreads threads) {
    this.threads = threads;
  }

  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public Connection connect(InetSocketAddress server, ConnectionOptions options) {
    return TcpConnection.open(server, options, threads);
  }
}
