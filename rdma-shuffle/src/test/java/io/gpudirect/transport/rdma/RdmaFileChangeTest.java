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
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An RDMA read of a file written while the server moves it, over {@link LoopbackVerbsDouble}
 * (a TEST DOUBLE of the verbs: no RDMA hardware here); {@code RdmaOverUcxFileChangeTest} runs
 * it over real UCX. The server's CRC32C is of the bytes it wrote, so it would vouch for a mix
 * of two versions; the check after the last chunk must answer FILE_CHANGED instead of
 * RDMA_READ_DONE.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public class RdmaFileChangeTest {
  /** The connections' checksum and handshake threads, this test's own. */
  private final ConnectionThreads threads = new ConnectionThreads();

  @AfterEach
  void closeConnectionThreads() {
    threads.close();
  }

  @TempDir Path root;

  /** The verbs of one test's server and client, and a hold on the server's WRITEs. */
  protected interface HeldWrites {
    Verbs server();

    Verbs client();

    void hold();

    /** Whether the server has posted work that the hold keeps back. */
    boolean holding();

    void release();
  }

  /** Over the verbs double, which serves both sides. */
  protected HeldWrites heldWrites() {
    LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
    return new HeldWrites() {
      @Override
      public Verbs server() {
        return verbs;
      }

      @Override
      public Verbs client() {
        return verbs;
      }

      @Override
      public void hold() {
        verbs.holdWrites();
      }

      @Override
      public boolean holding() {
        return verbs.writesWaiting() > 0;
      }

      @Override
      public void release() {
        verbs.releaseWrites();
      }
    };
  }

  /** Also when the writer puts the exact modification time back: the change time moved. */
  @ParameterizedTest
  @EnumSource(value = FileChanges.class, names = {"OVERWRITTEN", "OVERWRITTEN_MTIME_PUT_BACK"})
  void aWriteBetweenTheChunksOfAnRdmaReadFailsItWithFileChanged(FileChanges change) throws Exception {
    HeldWrites verbs = heldWrites();
    Path file = root.resolve("live.bin");
    FileChanges.writeSettled(file, 4 << 20, 41);
    // Two 256 KiB chunks: a 4 MiB read waits for WRITEs to complete after its first two.
    RdmaService.Settings settings = new RdmaService.Settings(16, 256 << 10, 2, 16 << 10, Duration.ofSeconds(10));
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
            .verbs(verbs::server).rdmaSettings(settings).build().start();
        Connection c = new RdmaTransport(verbs.client(), threads).connect(new InetSocketAddress("127.0.0.1", server.port()),
            new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-rdma-change"))) {
      FileVersion version = ((StatResponse) c.call(new StatRequest(1, "live.bin"))
          .get(5, TimeUnit.SECONDS)).entry().version();
      verbs.hold();
      CompletableFuture<Void> read = c.read(new ReadRequest(2, "live.bin", version, 0, 4 << 20),
          ByteBuffer.allocateDirect(4 << 20));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!verbs.holding() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(verbs.holding(), "the server has begun the read and waits for its WRITEs");
      change.apply(file, 42);
      verbs.release();

      ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
      ServerErrorException refused = assertInstanceOf(ServerErrorException.class, e.getCause(), String.valueOf(e.getCause()));
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.getMessage());
      assertTrue(refused.getMessage().contains("'live.bin'")
          && refused.getMessage().contains("while it was being read"), refused.getMessage());
    }
  }
}
