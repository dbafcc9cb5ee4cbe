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
import io.gpudirect.verbs.disni.DisniVerbs;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fallback ladder, each step with its reason: no libdisni (this host, for real), a server
 * without RDMA, GPU memory that cannot be registered; and transport=rdma failing clearly.
 * RDMA itself runs over {@link LoopbackVerbsDouble}, a TEST DOUBLE of the verbs.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TransportSelectorTest {
  @TempDir static Path root;
  static final LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
  static BlockServer rdmaServer;
  static BlockServer tcpServer;
  static byte[] data;

  @BeforeAll
  static void start() throws IOException {
    data = TestFiles.write(root.resolve("d.bin"), 1 << 20, 3);
    rdmaServer = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON).verbs(() -> verbs).build().start();
    tcpServer = BlockServer.builder().root(root).port(0).rdma(RdmaMode.AUTO).rdmaProvider(RdmaProvider.DISNI)
        .build().start();
  }

  @AfterAll
  static void stop() {
    rdmaServer.close();
    tcpServer.close();
  }

  @Test
  void withoutLibdisniAutoChoosesTcpAndSaysWhy() {
    String missing = DisniVerbs.unavailableReason();
    assumeTrue(missing != null, "this host has libdisni and an RDMA device");
    TransportSelector.Selection s = TransportSelector.of(RdmaProvider.DISNI).choose("auto");
    assertEquals("tcp", s.transport().name());
    assertTrue(s.reason().startsWith("transport=auto chose TCP: "), s.reason());
    assertTrue(s.reason().contains("libdisni not found") || s.reason().contains("no RDMA device"), s.reason());
  }

  @Test
  void withoutLibdisniTransportRdmaFailsSayingWhatToInstall() {
    assumeTrue(DisniVerbs.unavailableReason() != null, "this host has libdisni and an RDMA device");
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> TransportSelector.of(RdmaProvider.DISNI).choose("rdma"));
    assertTrue(e.getMessage().startsWith("transport=rdma requested but RDMA is not available: "), e.getMessage());
    for (String needed : new String[] {"rdma-core", "libdisni", "nvidia-peermem", "transport=auto"}) {
      assertTrue(e.getMessage().contains(needed), "names " + needed + ": " + e.getMessage());
    }
  }

  @Test
  void aServerThatCannotServeRdmaSaysWhyAndServesTcp() {
    assumeTrue(DisniVerbs.unavailableReason() != null, "this host has libdisni and an RDMA device");
    assertEquals("tcp", tcpServer.transports());
    assertTrue(tcpServer.rdmaStatus().contains("libdisni") || tcpServer.rdmaStatus().contains("RDMA device"),
        tcpServer.rdmaStatus());
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> BlockServer.builder().root(root)
        .port(0).rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.DISNI).build().start());
    assertTrue(e.getMessage().contains("--rdma on") && e.getMessage().contains("rdma-core"), e.getMessage());
  }

  @Test
  void autoWithRdmaOnBothSidesReadsOverRdma() throws Exception {
    try (BlockClient c = client(rdmaServer, "auto")) {
      assertEquals("rdma", c.transport());
      assertTrue(c.transportReason().startsWith("transport=auto chose RDMA"), c.transportReason());
      ByteBuffer dst = ByteBuffer.allocateDirect(300_000);
      c.read("d.bin", 1000, dst);
      byte[] got = new byte[300_000];
      dst.flip().get(got);
      assertArrayEquals(Arrays.copyOfRange(data, 1000, 301_000), got);
    }
  }

  @Test
  void autoWithAServerWithoutRdmaFallsBackToTcpAndSaysWhy() throws Exception {
    try (BlockClient c = client(tcpServer, "auto")) {
      assertEquals("tcp", c.transport());
      assertTrue(c.transportReason().startsWith("transport=auto chose TCP: "), c.transportReason());
      assertTrue(c.transportReason().contains("does not serve RDMA"), c.transportReason());
      ByteBuffer dst = ByteBuffer.allocate(1000);
      c.read("d.bin", 0, dst);
      assertEquals(1000, dst.position());
    }
  }

  @Test
  void transportRdmaWithAServerWithoutRdmaFails() {
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> client(tcpServer, "rdma"));
    assertTrue(e.getMessage().contains("does not serve RDMA"), e.getMessage());
  }

  @Test
  void gpuMemoryThatCannotBeRegisteredFallsBackToPinnedChunksOnce() {
    try (BlockClient c = client(rdmaServer, "auto")) {
      // An address with no memory behind it, as GPU memory is to a NIC without nvidia-peermem.
      long unregistrable = 0x7f7f_0000_0000_0000L;
      assertFalse(c.readIntoDevice("d.bin", io.gpudirect.protocol.FileVersion.ANY, 0, unregistrable, 4096));
      assertEquals("rdma", c.transport(), "reads still go over RDMA, into pinned host chunks");
      assertTrue(c.transportReason().contains("GPU memory cannot be registered"), c.transportReason());
      assertTrue(c.transportReason().contains("pinned host chunks, then a copy to the GPU"), c.transportReason());
      String once = c.transportReason();
      assertFalse(c.readIntoDevice("d.bin", io.gpudirect.protocol.FileVersion.ANY, 0, unregistrable, 4096));
      assertEquals(once, c.transportReason(), "the step is recorded once");
    }
  }

  @Test
  void overTcpThereIsNoDeviceRead() {
    try (BlockClient c = client(rdmaServer, "tcp")) {
      assertFalse(c.readIntoDevice("d.bin", io.gpudirect.protocol.FileVersion.ANY, 0, 0x1000, 4096));
    }
  }

  private static BlockClient client(BlockServer server, String transport) {
    return BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().transport(transport).streams(2).build(), new TransportSelector(() -> verbs));
  }
}
