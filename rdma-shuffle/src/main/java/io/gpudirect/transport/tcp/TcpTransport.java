package io.gpudirect.transport.tcp;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import java.net.InetSocketAddress;

/** Requests and payloads over one TCP socket per connection. */
public final class TcpTransport implements Transport {
  private final ConnectionThreads threads;
  private final BufferAllocator memory;

  /** As {@link #TcpTransport(ConnectionThreads, BufferAllocator)}, charging the process-wide root. */
  public TcpTransport(ConnectionThreads threads) {
    this(threads, BufferAllocator.root());
  }

  /**
   * Its connections check checksums and handshake deadlines on {@code threads}, which the caller
   * owns, and charge their inbox and outbox to {@code memory} while open.
   */
  public TcpTransport(ConnectionThreads threads, BufferAllocator memory) {
    this.threads = threads;
    this.memory = memory;
  }

  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public Connection connect(InetSocketAddress server, ConnectionOptions options) {
    return TcpConnection.open(server, options, threads, memory);
  }
}
