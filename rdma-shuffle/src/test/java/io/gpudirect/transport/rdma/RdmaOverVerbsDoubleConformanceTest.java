package io.gpudirect.transport.rdma;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportConformanceTest;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;

/**
 * The transport conformance suite for RDMA, over {@link LoopbackVerbsDouble}: a TEST DOUBLE of
 * the verbs, since no machine here has an RDMA device. The server and client code above the
 * verbs is the real one. {@code RdmaOverDisniConformanceTest} runs the same suite on real
 * DiSNI where there is a device.
 */
class RdmaOverVerbsDoubleConformanceTest extends TransportConformanceTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  private final LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();

  @Override
  protected Transport transport() {
    return new RdmaTransport(verbs, THREADS);
  }

  @Override
  protected BlockServerBuilder configure(BlockServerBuilder builder) {
    return builder.rdma(RdmaMode.ON).verbs(() -> verbs);
  }

  /** Held WRITEs stall the server; killing it is every server-side queue pair dying. */
  @Override
  protected FaultyPath faultyPath() {
    verbs.holdWrites();
    return new FaultyPath() {
      @Override
      public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", server.port());
      }

      @Override
      public void killPeer() {
        verbs.killServers();
      }

      @Override
      public void close() {
        verbs.releaseWrites();
      }
    };
  }
}
