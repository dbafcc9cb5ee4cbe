package io.gpudirect.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An RDMA read of a file written while the server moves it, over {@link LoopbackVerbsDouble}
 * (a TEST DOUBLE of the verbs: no RDMA hardware here). The server's CRC32C is of the bytes it
 * wrote, so it would vouch for a mix of two versions; the check after the last chunk must
 * answer FILE_CHANGED instead of RDMA_READ_DONE.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmaFileChangeTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  @TempDir Path root;

  @Test
  void aWriteBetweenTheChunksOfAnRdmaReadFailsItWithFileChanged() throws Exception {
    LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
    Path file = root.resolve("live.bin");
    FileChanges.writeSettled(file, 4 << 20, 41);
    // Two 256 KiB chunks: a 4 MiB read waits for WRITEs to complete after its first two.
    RdmaService.Settings settings = new RdmaService.Settings(16, 256 << 10, 2, 16 << 10, Duration.ofSeconds(10));
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
            .verbs(() -> verbs).rdmaSettings(settings).build().start();
        Connection c = new RdmaTransport(verbs, THREADS).connect(new InetSocketAddress("127.0.0.1", server.port()),
            new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-rdma-change"))) {
      FileVersion version = ((StatResponse) c.call(new StatRequest(1, "live.bin"))
          .get(5, TimeUnit.SECONDS)).entry().version();
      verbs.holdWrites();
      CompletableFuture<Void> read = c.read(new ReadRequest(2, "live.bin", version, 0, 4 << 20),
          ByteBuffer.allocateDirect(4 << 20));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (verbs.writesWaiting() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(verbs.writesWaiting() > 0, "the server has begun the read and waits for its WRITEs");
      FileChanges.OVERWRITTEN.apply(file, 42);
      verbs.releaseWrites();

      ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
      ServerErrorException refused = assertInstanceOf(ServerErrorException.class, e.getCause(), String.valueOf(e.getCause()));
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.getMessage());
      assertTrue(refused.getMessage().contains("'live.bin'")
          && refused.getMessage().contains("while it was being read"), refused.getMessage());
    }
  }
}
