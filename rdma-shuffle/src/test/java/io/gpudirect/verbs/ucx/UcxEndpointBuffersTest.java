package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.BufferAllocator;
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
 * A UCX endpoint's buffers (its frame headers, its send frames, key buffers) are charged to the
 * verbs' allocator while it is open, named after its peer, and all given back when it closes:
 * on both sides, over real UCX. ({@link SendFramesTest}: frames are reused from one message to
 * the next.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxEndpointBuffersTest {
  @TempDir static Path root;
  static byte[] data;
  static final ConnectionThreads THREADS = new ConnectionThreads();

  @BeforeAll
  static void write() throws Exception {
    RdmaOverUcxConformanceTest.needsUcx();
    data = TestFiles.write(root.resolve("d.bin"), 1 << 20, 43);
  }

  @AfterAll
  static void closeThreads() {
    THREADS.close();
  }

  @Test
  void anEndpointsBuffersAreChargedWhileOpenReusedPerMessageAndGoneOnceClosed() throws Exception {
    UcxVerbs verbs = UcxVerbs.open();
    BufferAllocator memory = verbs.memory();
    assertEquals(0, memory.outstandingBytes(), "no endpoint open before: " + memory.outstanding());
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
            .verbs(() -> verbs).build().start();
        RdmaConnection c = new RdmaTransport(verbs, THREADS).connect(
            new InetSocketAddress("127.0.0.1", server.port()),
            new ConnectionOptions(null, Duration.ofSeconds(10), "gpudirect-client-ucx-buffers"))) {
      String held = memory.outstanding();
      assertTrue(held.contains("UCX frame header of gpudirect server 127.0.0.1:")
          && held.contains("UCX frame header of client "), "both sides' endpoints: " + held);
      for (int id = 1; id <= 60; id++) {
        read(c, id);
      }
      // 60 reads sent some 180 frames (a SEND each way, WRITEs); what is held now is each
      // side's headers and the frames its pool keeps for the next messages.
      assertTrue(memory.outstandingBuffers() <= 2 * (1 + 4), "after 60 reads: " + memory.outstanding());
    }
    memory.assertNoLeaks();
  }

  private static void read(RdmaConnection c, int id) throws Exception {
    int offset = id * 1000;
    int length = 64 << 10;
    ByteBuffer dst = ByteBuffer.allocateDirect(length);
    c.read(new ReadRequest(id, "d.bin", offset, length), dst).get(30, TimeUnit.SECONDS);
    byte[] got = new byte[length];
    dst.duplicate().clear().get(got);
    assertArrayEquals(Arrays.copyOfRange(data, offset, offset + length), got);
  }
}
