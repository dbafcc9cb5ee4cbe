package io.gpudirect.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.NoLeaksExtension;
import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link Transport} must do, run against a real server. Each transport runs it by
 * overriding {@link #transport()} ({@code TcpTransportConformanceTest}; RDMA's will follow).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@ExtendWith(NoLeaksExtension.class)
public abstract class TransportConformanceTest {
  @TempDir static Path root;
  static BlockServer server;
  static byte[] data;

  protected abstract Transport transport();

  @BeforeAll
  static void start() throws IOException {
    data = TestFiles.write(root.resolve("d.bin"), 8 << 20, 17);
    server = BlockServer.builder().root(root).port(0).maxReadLength(4 << 20).build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private Connection connect() {
    return transport().connect(new InetSocketAddress("127.0.0.1", server.port()),
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-conformance"));
  }

  @Test
  void pipelinedReadsLandInTheirBuffers() throws Exception {
    try (Connection c = connect()) {
      assertEquals(4 << 20, c.maxReadLength());
      assertEquals(server.port(), c.peer().getPort());
      List<ByteBuffer> buffers = new ArrayList<>();
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        ByteBuffer dst = i % 2 == 0 ? ByteBuffer.allocateDirect(1 << 20)
            : ByteBuffer.allocate(1 << 20);
        buffers.add(dst);
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", i * (1L << 20), 1 << 20), dst));
      }
      for (int i = 0; i < 8; i++) {
        reads.get(i).get(10, TimeUnit.SECONDS);
        byte[] got = new byte[1 << 20];
        buffers.get(i).flip().get(got);
        assertArrayEquals(Arrays.copyOfRange(data, i << 20, (i + 1) << 20), got, "chunk " + i);
      }
    }
  }

  @Test
  void controlCallsAndRefusals() throws Exception {
    try (Connection c = connect()) {
      StatResponse s = (StatResponse) c.call(1, new StatRequest(1, "d.bin")).get(5, TimeUnit.SECONDS);
      assertEquals(8 << 20, s.entry().length());
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> c.read(new ReadRequest(2, "none", 0, 1), ByteBuffer.allocate(1)).get(5, TimeUnit.SECONDS));
      assertEquals(ErrorCode.NOT_FOUND, assertInstanceOf(ServerErrorException.class, e.getCause()).code());
      assertTrue(c.isOpen(), "a refusal leaves the connection usable");
    }
  }

  @Test
  void abortFailsEverythingOutstandingWithTheCause() throws Exception {
    // Through a proxy that stalls after the first MiB, so no read can finish before the abort,
    // however busy the machine is.
    try (LoopbackCutter stall = new LoopbackCutter(server.port(), 1 << 20, Integer.MAX_VALUE).stallInsteadOfClose()) {
      Connection c = transport().connect(new InetSocketAddress("127.0.0.1", stall.port()),
          new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-conformance"));
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        reads.add(c.read(new ReadRequest(i + 1, "d.bin", 0, 4 << 20),
            ByteBuffer.allocateDirect(4 << 20)));
      }
      GpuDirectException cause = new ConnectionLostException("test abort", null);
      c.abort(cause);
      for (CompletableFuture<Void> r : reads) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> r.get(5, TimeUnit.SECONDS));
        assertSame(cause, e.getCause());
      }
      assertFalse(c.isOpen());
      ExecutionException after = assertThrows(ExecutionException.class,
          () -> c.read(new ReadRequest(99, "d.bin", 0, 1), ByteBuffer.allocate(1)).get(5, TimeUnit.SECONDS));
      assertSame(cause, after.getCause());
      c.close();
    }
  }

}
