package io.gpudirect.verbs;

import java.net.InetSocketAddress;

/** A listening RDMA CM id; closing it stops accepting (endpoints already made stay up). */
public interface RdmaListener extends AutoCloseable {
  InetSocketAddress address();

  @Override
  void close();
}
