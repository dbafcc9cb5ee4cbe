package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both ways a WRITE travels over real UCX: as a frame on the endpoint's stream where a host has
 * no RDMA device (what runs here and in CI), and as a UCX put (what verbs would carry), here
 * UCX's software put over TCP, so that the put path keeps running without a NIC. No peer is
 * killed: with software puts that can abort this JVM (UcxVerbs' class comment).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxWritePathsTest {
  @TempDir static Path root;
  static byte[] data;
  static final ConnectionThreads THREADS = new ConnectionThreads();

  @BeforeAll
  static void write() throws Exception {
    RdmaOverUcxConformanceTest.needsUcx();
    data = TestFiles.write(root.resolve("d.bin"), 6 << 20, 41);
  }

  @AfterAll
  static void closeThreads() {
    THREADS.close();
  }

  @Test
  void withoutAnRdmaDeviceWritesGoOnTheStreamAndLandWhole() throws Exception {
    assumeTrue(UcxLibrary.rdmaDevices().isEmpty(), "this host has an RDMA device: UCX puts run here");
    UcxVerbs verbs = UcxVerbs.open();
    long putsBefore = verbs.writes().puts.sum();
    long streamBefore = verbs.writes().streamWrites.sum();
    readAndCheck(verbs);
    assertTrue(verbs.writes().streamWrites.sum() > streamBefore, "the WRITEs went on the stream");
    assertEquals(putsBefore, verbs.writes().puts.sum(), "no UCX put was issued");
  }

  @Test
  void softwarePutsLandWhole() throws Exception {
    UcxVerbs verbs = UcxVerbs.open().withSoftwarePuts();
    readAndCheck(verbs);
    assertTrue(verbs.writes().puts.sum() > 0, "the WRITEs were UCX puts");
    assertEquals(0, verbs.writes().streamWrites.sum(), "no WRITE went on the stream");
  }

  /** A read of 5 MiB at an odd offset (several chunks, a partial last one) lands byte for byte. */
  private static void readAndCheck(UcxVerbs verbs) throws Exception {
    int offset = 12345;
    int length = 5 << 20;
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
            .verbs(() -> verbs).build().start();
        RdmaConnection c = new RdmaTransport(verbs, THREADS).connect(
            new InetSocketAddress("127.0.0.1", server.port()),
            new ConnectionOptions(null, Duration.ofSeconds(10), "gpudirect-client-ucx-writes"))) {
      ByteBuffer dst = ByteBuffer.allocateDirect(length);
      c.read(new ReadRequest(1, "d.bin", offset, length), dst).get(30, TimeUnit.SECONDS);
      byte[] got = new byte[length];
      dst.duplicate().clear().get(got);
      assertArrayEquals(Arrays.copyOfRange(data, offset, offset + length), got);
    }
  }
}
