package io.gpudirect.transport.rdma;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportConformanceTest;
import io.gpudirect.verbs.disni.DisniVerbs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The transport conformance suite on real DiSNI and a real RDMA device. Needs libdisni, a
 * device, and {@code -Dgpudirect.rdma.address=IP} naming an address of an RDMA-capable
 * interface (RDMA CM cannot use 127.0.0.1; soft RoCE, {@code rdma link add rxe0 type rxe
 * netdev eth0}, gives one on any Linux host). Skips otherwise. Tagged {@code rdma}: the
 * default build leaves it out. It has never run: no machine here has RDMA.
 */
@Tag("rdma")
class RdmaOverDisniConformanceTest extends TransportConformanceTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  private static final String ADDRESS = System.getProperty("gpudirect.rdma.address");

  /** Called first thing in the suite's setup: the whole class skips without RDMA. */
  private static void needsRdma() {
    String missing = DisniVerbs.unavailableReason();
    assumeTrue(missing == null, "no RDMA here: " + missing);
    assumeTrue(ADDRESS != null, "set -Dgpudirect.rdma.address to an IP of an RDMA-capable interface");
  }

  @Override
  protected Transport transport() {
    return new RdmaTransport(DisniVerbs.open(), THREADS);
  }

  @Override
  protected BlockServerBuilder configure(BlockServerBuilder builder) {
    needsRdma();
    return builder.bindAddress(ADDRESS).rdma(RdmaMode.ON).verbs(DisniVerbs::open);
  }

  @Override
  protected Connection connect() {
    return connect(new InetSocketAddress(ADDRESS, server.port()));
  }

  @Override
  protected Connection connect(InetSocketAddress address) {
    return transport().connect(address,
        new ConnectionOptions(null, Duration.ofSeconds(10), "gpudirect-client-conformance"));
  }

  /** Real hardware cannot be told to stall or die; the TCP proxy stalls the control path only. */
  @Override
  protected FaultyPath faultyPath() throws IOException {
    assumeTrue(false, "fault injection needs the verbs double (RdmaOverVerbsDoubleConformanceTest)");
    return null;
  }
}
