package io.gpudirect.transport.tcp;

import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportConformanceTest;
import org.junit.jupiter.api.AfterAll;

class TcpTransportConformanceTest extends TransportConformanceTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  @Override
  protected Transport transport() {
    return new TcpTransport(THREADS);
  }
}
