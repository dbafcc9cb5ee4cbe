package io.gpudirect.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Who reads a TCP connection's answers: a waiting caller itself, or the reader thread. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpConnectionReadingTest {
  /** The connections' checksum and handshake threads, this class's own. */
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  @TempDir Path root;

  @Test
  void aCallerWaitingForItsReadReadsTheAnswerItself() throws IOException {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 1 << 20, 1);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start();
        Connection c = connect(server)) {
      int byCaller = 0;
      int reads = 50;
      for (int i = 0; i < reads; i++) {
        ByteBuffer dst = ByteBuffer.allocateDirect(4096);
        int offset = i * 10_007;
        CompletableFuture<Void> f = c.callerReads().orElseThrow().readForCaller(new ReadRequest(i + 1, "f.bin", offset, 4096), dst);
        AtomicReference<Thread> completedOn = new AtomicReference<>();
        f.thenRun(() -> completedOn.set(Thread.currentThread()));
        c.callerReads().orElseThrow().readAnswersUntil(f);
        f.join();
        assertEquals(ByteBuffer.wrap(data, offset, 4096), dst.flip(), "read " + i);
        if (completedOn.get() == Thread.currentThread()) {
          byCaller++;
        }
      }
      // The reader thread reads the first answer after an idle spell (it is watching the
      // socket then); back to back, the caller reads its own.
      assertTrue(byCaller >= reads / 2, byCaller + " of " + reads + " answers read by the caller");
    }
  }

  @Test
  void anInterruptedCallerLeavesTheReadingToTheReaderThread() throws IOException {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 1 << 20, 3);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start();
        Connection c = connect(server)) {
      for (int i = 0; i < 5; i++) {
        ByteBuffer dst = ByteBuffer.allocateDirect(4096);
        CompletableFuture<Void> f = c.callerReads().orElseThrow().readForCaller(new ReadRequest(i + 1, "f.bin", i * 4096L, 4096), dst);
        // A blocked read on an interrupted thread would close the shared socket.
        Thread.currentThread().interrupt();
        try {
          c.callerReads().orElseThrow().readAnswersUntil(f);
          f.join();
        } finally {
          assertTrue(Thread.interrupted(), "the interrupt is left for the caller");
        }
        assertEquals(ByteBuffer.wrap(data, i * 4096, 4096), dst.flip());
        assertTrue(c.isOpen(), "the connection survives an interrupted caller");
      }
    }
  }

  @Test
  void aServerClosingAnIdleConnectionIsNoticedBeforeTheNextRequest() throws Exception {
    TestFiles.write(root.resolve("f.bin"), 4096, 2);
    BlockServer server = BlockServer.builder().root(root).port(0).build().start();
    try (Connection c = connect(server)) {
      CompletableFuture<Void> f = c.callerReads().orElseThrow().readForCaller(new ReadRequest(1, "f.bin", 0, 4096),
          ByteBuffer.allocateDirect(4096));
      c.callerReads().orElseThrow().readAnswersUntil(f);
      f.get(5, TimeUnit.SECONDS);
      assertTrue(c.isOpen());
      // Closing drains: the idle connection is closed by the server within 250 ms.
      server.close();
      assertTrue(Settle.until(() -> !c.isOpen()), "the connection the server closed still looks open");
    } finally {
      server.close();
    }
  }

  private static Connection connect(BlockServer server) {
    return new TcpTransport(THREADS).connect(new InetSocketAddress("127.0.0.1", server.port()),
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-client-reading-test"));
  }
}
