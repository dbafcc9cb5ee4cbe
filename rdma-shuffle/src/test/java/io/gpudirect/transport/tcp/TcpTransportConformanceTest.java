package io.gpudirect.transport.tcp;

import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportConformanceTest;

class TcpTransportConformanceTest extends TransportConformanceTest {
  @Override
  protected Transport transport() {
    return new TcpTransport();
  }
}
