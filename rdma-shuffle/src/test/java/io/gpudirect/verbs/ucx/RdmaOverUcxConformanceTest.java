package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportConformanceTest;
import io.gpudirect.transport.rdma.RdmaTransport;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;

/**
 * The transport conformance suite over real UCX (libucp from the OS, jucx): on a machine
 * without an RDMA NIC, UCX carries the puts over TCP or shared memory, through the same calls
 * that drive verbs on a NIC. Skips, saying why, where libucp is missing ({@code .ci/run}
 * installs it). Faults: the server's writes are held and its endpoints closed by
 * {@link HeldWritesVerbs}, which wraps the real UCX verbs.
 */
class RdmaOverUcxConformanceTest extends TransportConformanceTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  private HeldWritesVerbs serverVerbs;

  static void needsUcx() {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
  }

  @Override
  protected Transport transport() {
    return new RdmaTransport(UcxVerbs.open(), THREADS);
  }

  @Override
  protected BlockServerBuilder configure(BlockServerBuilder builder) {
    needsUcx();
    serverVerbs = new HeldWritesVerbs(UcxVerbs.open());
    return builder.rdma(RdmaMode.ON).verbs(() -> serverVerbs);
  }

  @Override
  protected FaultyPath faultyPath() {
    serverVerbs.holdWrites();
    return new FaultyPath() {
      @Override
      public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", server.port());
      }

      @Override
      public void killPeer() {
        serverVerbs.killServers();
      }

      @Override
      public void close() {
        serverVerbs.releaseWrites();
      }
    };
  }
}
