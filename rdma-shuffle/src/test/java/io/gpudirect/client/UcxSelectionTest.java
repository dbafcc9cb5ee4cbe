package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import io.gpudirect.verbs.provider.RdmaProvider;
import io.gpudirect.verbs.ucx.UcxLibrary;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Choosing UCX, for real (libucp here, no RDMA device): transport=rdma runs over UCX's TCP and
 * names it ucx:tcp, never rdma; transport=auto does not take UCX over TCP and says why; a
 * client whose provider differs from the server's is told which one the server runs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxSelectionTest {
  @TempDir static Path root;
  static BlockServer server;
  static byte[] data;

  @BeforeAll
  static void start() throws IOException {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    assumeTrue(!Files.isDirectory(Path.of("/sys/class/infiniband")), "this host has an RDMA device");
    data = TestFiles.write(root.resolve("d.bin"), 1 << 20, 5);
    // --rdma on with the default provider: UCX, since libucp loads, over what it has (TCP).
    server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON).build().start();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static BlockClient client(String transport, TransportSelector selector) {
    return BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().transport(transport).streams(2).build(), selector);
  }

  @Test
  void theServerNamesUcxOverTcpAndNeverCallsItRdma() {
    assertEquals("tcp,ucx:tcp", server.transports());
    assertTrue(server.rdmaStatus().startsWith("ucx:tcp on UCX "), server.rdmaStatus());
    assertTrue(server.rdmaStatus().contains("not RDMA"), server.rdmaStatus());
  }

  @Test
  void transportRdmaRunsOverUcxTcpAndSaysSo() {
    try (BlockClient c = client("rdma", TransportSelector.of(RdmaProvider.AUTO))) {
      assertEquals("ucx:tcp", c.transport());
      assertTrue(c.transportReason().contains("UCX, since libucp loads"), c.transportReason());
      assertTrue(c.transportReason().contains("carried by ucx:tcp"), c.transportReason());
      ByteBuffer dst = ByteBuffer.allocateDirect(500_000);
      c.read("d.bin", 777, dst);
      byte[] got = new byte[500_000];
      dst.flip().get(got);
      assertArrayEquals(Arrays.copyOfRange(data, 777, 500_777), got);
    }
  }

  @Test
  void transportAutoDoesNotTakeUcxOverTcpAndSaysWhy() {
    try (BlockClient c = client("auto", TransportSelector.of(RdmaProvider.UCX))) {
      assertEquals("tcp", c.transport());
      assertTrue(c.transportReason().startsWith("transport=auto chose TCP: "), c.transportReason());
      assertTrue(c.transportReason().contains("UCX has no RDMA transport"), c.transportReason());
    }
  }

  @Test
  void gpuMemoryIsNotMappedByAUcxWithoutCuda() {
    try (BlockClient c = client("rdma", TransportSelector.of(RdmaProvider.UCX))) {
      assertFalse(c.readIntoDevice("d.bin", io.gpudirect.protocol.FileVersion.ANY, 0, 0x7f7f_0000_0000_0000L, 4096));
      assertTrue(c.transportReason().contains("cannot map GPU memory"), c.transportReason());
    }
  }

  @Test
  void aClientOnAnotherProviderIsToldWhichTheServerRuns() {
    LoopbackVerbsDouble rdmaCm = new LoopbackVerbsDouble();
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> client("rdma", new TransportSelector(() -> rdmaCm)));
    assertTrue(e.getMessage().contains("serves RDMA through UCX"), e.getMessage());
    assertTrue(e.getMessage().contains("rdma.provider=ucx"), e.getMessage());
  }
}
