package io.gpudirect.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Connection#closeWhenAnswered} over TCP, as a client retires a connection that brought a
 * corrupt answer: the reads already sent on it finish with their bytes, then it closes; an idle
 * one closes at once; a request sent on it while it is being closed is answered or fails as on a
 * lost connection, never left waiting.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClosingWhenAnsweredTest {
  private static final ConnectionThreads THREADS = new ConnectionThreads();
  private static final int READ = 8 << 20;

  @AfterAll
  static void closeConnectionThreads() {
    THREADS.close();
  }

  @TempDir Path root;

  @Test
  void readsInFlightFinishWithTheirBytesThenTheConnectionCloses() throws Exception {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 4 * READ, 1);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start();
        Connection c = connect(server)) {
      List<CompletableFuture<Void>> reads = new ArrayList<>();
      List<ByteBuffer> dsts = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        ByteBuffer dst = ByteBuffer.allocateDirect(READ);
        dsts.add(dst);
        reads.add(c.read(new ReadRequest(i + 1, "f.bin", (long) i * READ, READ), dst));
      }
      assertTrue(c.closeWhenAnswered());
      // 32 MiB pipelined on loopback take milliseconds; the call above, microseconds.
      assertFalse(reads.get(3).isDone(), "the last read was not in flight when the connection was retired");
      for (int i = 0; i < 4; i++) {
        reads.get(i).get(20, TimeUnit.SECONDS);
        assertEquals(ByteBuffer.wrap(data, i * READ, READ), dsts.get(i).flip(), "read " + i);
      }
      assertTrue(Settle.until(() -> !c.isOpen()), "still open once its answers were in");
      assertEquals(0, Settle.count(() -> server.stats().connectionsActive(), 0), "the server's side");
      CompletableFuture<Void> late = c.read(new ReadRequest(9, "f.bin", 0, 4096), ByteBuffer.allocateDirect(4096));
      CompletionException e = assertThrows(CompletionException.class, late::join);
      assertInstanceOf(ConnectionLostException.class, e.getCause());
    }
  }

  @Test
  void anIdleConnectionClosesAtOnce() throws IOException {
    TestFiles.write(root.resolve("f.bin"), 4096, 2);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start();
        Connection c = connect(server)) {
      c.read(new ReadRequest(1, "f.bin", 0, 4096), ByteBuffer.allocateDirect(4096)).join();
      assertTrue(c.closeWhenAnswered());
      assertFalse(c.isOpen());
    }
  }

  /** A read sent, where its bytes go, and where they come from. */
  private record Sent(CompletableFuture<Void> future, ByteBuffer dst, int offset) {}

  /**
   * Requests sent from several threads while the connection is closed, as streams and control
   * calls that took it just before it was retired send them: each is answered with its bytes or
   * fails with a lost connection (which a client retries); none is left waiting.
   */
  @Test
  void requestsSentWhileItClosesAreAnsweredOrLost() throws Exception {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 1 << 20, 3);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      for (int round = 0; round < 20; round++) {
        try (Connection c = connect(server)) {
          List<Sent> sent = new CopyOnWriteArrayList<>();
          AtomicLong ids = new AtomicLong();
          CountDownLatch started = new CountDownLatch(3);
          List<Thread> senders = new ArrayList<>();
          for (int t = 0; t < 3; t++) {
            Thread s = new Thread(() -> {
              started.countDown();
              for (int i = 0; i < 200 && c.isOpen(); i++) {
                long id = ids.incrementAndGet();
                int offset = (int) (id * 97 % 1000) * 1024;
                ByteBuffer dst = ByteBuffer.allocateDirect(4096);
                sent.add(new Sent(c.read(new ReadRequest(id, "f.bin", offset, 4096), dst), dst, offset));
              }
            });
            senders.add(s);
            s.start();
          }
          started.await();
          Thread.sleep(round % 3);
          c.closeWhenAnswered();
          for (Thread s : senders) {
            s.join(10_000);
          }
          int answered = 0;
          for (Sent r : sent) {
            try {
              r.future().get(10, TimeUnit.SECONDS);
              assertEquals(ByteBuffer.wrap(data, r.offset(), 4096), r.dst().flip(), "at " + r.offset());
              answered++;
            } catch (ExecutionException e) {
              assertInstanceOf(ConnectionLostException.class, e.getCause(), "round " + round);
            }
          }
          assertTrue(Settle.until(() -> !c.isOpen()), "round " + round + ": still open with "
              + answered + " of " + sent.size() + " reads answered");
        }
      }
      assertEquals(0, Settle.count(() -> server.stats().connectionsActive(), 0));
    }
  }

  private static Connection connect(BlockServer server) {
    return new TcpTransport(THREADS).connect(new InetSocketAddress("127.0.0.1", server.port()),
        new ConnectionOptions(null, Duration.ofSeconds(5), "gpudirect-closing-when-answered-test"));
  }
}
