package io.gpudirect.transport.tcp;

import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.Transport;
import java.net.InetSocketAddress;

/** Requests and payloads over one TCP socket per connection. */
public final class TcpTransport implements Transport {
  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public Connection connect(InetSocketAddress server, ConnectionOptions options) {
    return TcpConnection.open(server, options);
  }
}
