package io.gpudirect.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.ClientContext;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader's plan fetched ahead through the gpudirect:// file system, against a real server
 * on loopback: the bytes are the file's, exactly the planned bytes cross the wire, and they
 * cross before the reader asks for them.
 */
class ReadAheadTest {
  private static final int MIB = 1 << 20;

  @TempDir
  static java.nio.file.Path root;

  private static BlockServer server;
  private static String base;
  private static byte[] data;
  /** What a read of the last 8 bytes fetches: the small-read window that ends at the end. */
  private static final long TAIL = RemoteInputStream.READ_AHEAD;

  @BeforeAll
  static void start() throws IOException {
    data = new byte[16 * MIB];
    new Random(11).nextBytes(data);
    Files.write(root.resolve("data.bin"), data);
    Files.write(root.resolve("other.bin"), Arrays.copyOf(data, 2 * MIB));
    server = BlockServer.builder().root(root).port(0).build().start();
    base = "gpudirect://127.0.0.1:" + server.port();
  }

  @AfterAll
  static void stop() {
    RemoteStores.closeAll();
    server.close();
  }

  /** Two planned ranges with a gap, as a projection of some columns gives them. */
  private static ReadPlan plan() {
    return ReadPlan.of(base + "/data.bin", List.of(new long[] {MIB, 6L * MIB}, new long[] {9L * MIB, 5L * MIB}));
  }

  private static FileSystem fs(ReadPlan plan, String readAhead) throws IOException {
    Configuration conf = new Configuration();
    conf.set("spark.gpudirect.readAhead", readAhead);
    if (plan != null) {
      plan.set(conf);
    }
    return FileSystem.newInstance(URI.create(base + "/"), conf);
  }

  @Test
  void plannedRangesArriveAheadOfTheReaderInFileOrderAndNothingElseIsFetched() throws Exception {
    long before = quietBytesSent();
    try (FileSystem fs = fs(plan(), "8m"); FSDataInputStream in = fs.open(new Path(base + "/data.bin"))) {
      // Opening starts the first window before any read: two pieces, which never span ranges.
      assertEquals(6L * MIB, bytesSentSince(before, 6L * MIB));
      // The footer, outside the plan: read directly (the stream's small-read window, which
      // ends at the end of the file), and the pieces stay.
      assertArrayEquals(Arrays.copyOfRange(data, data.length - 8, data.length), readAt(in, data.length - 8, 8, false));
      assertArrayEquals(Arrays.copyOfRange(data, MIB, 7 * MIB), readAt(in, MIB, 6 * MIB, false));
      // Having consumed the first range, the window already holds the start of the second.
      long sentAfterFirst = bytesSentSince(before, TAIL + 10L * MIB);
      assertTrue(sentAfterFirst >= TAIL + 10L * MIB, "sent " + sentAfterFirst);
      assertArrayEquals(Arrays.copyOfRange(data, 9 * MIB, 14 * MIB), readAt(in, 9L * MIB, 5 * MIB, true));
    }
    assertEquals(TAIL + plan().bytes(), bytesSentSince(before, TAIL + plan().bytes()));
  }

  @Test
  void readingBackOrPastThePiecesRestartsThePlanThereWithTheRightBytes() throws Exception {
    try (FileSystem fs = fs(plan(), "8m"); FSDataInputStream in = fs.open(new Path(base + "/data.bin"))) {
      // Into the second piece: the first is dropped.
      assertArrayEquals(Arrays.copyOfRange(data, 5 * MIB, 6 * MIB), readAt(in, 5L * MIB, MIB, false));
      // Back to the start of the range (a reader that read dictionary pages first, say).
      assertArrayEquals(Arrays.copyOfRange(data, MIB, 2 * MIB), readAt(in, MIB, MIB, true));
      // Past every piece, into the second range.
      assertArrayEquals(Arrays.copyOfRange(data, 12 * MIB, 14 * MIB), readAt(in, 12L * MIB, 2 * MIB, false));
      // A small read in the gap between ranges goes direct.
      assertArrayEquals(Arrays.copyOfRange(data, 8 * MIB, 8 * MIB + 100), readAt(in, 8L * MIB, 100, false));
    }
  }

  @Test
  void closingWithPiecesStillArrivingReturnsEveryBuffer() throws Exception {
    try (FileSystem fs = fs(plan(), "16m"); FSDataInputStream in = fs.open(new Path(base + "/data.bin"))) {
      assertArrayEquals(Arrays.copyOfRange(data, MIB, MIB + 10), readAt(in, MIB, 10, false));
      assertTrue(ReadAhead.bytesLent() > 0);
      // Charged to the client context's memory, named, while lent.
      String held = ClientContext.shared().memory().outstanding();
      assertTrue(held.contains(ReadAhead.PIECE + " (" + ReadAhead.MAX_PIECE + " bytes in 'root/client')"), held);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (ReadAhead.bytesLent() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(0, ReadAhead.bytesLent());
  }

  @Test
  void aPlanOfAnotherFileOrReadAheadZeroFetchesOnlyWhatIsRead() throws Exception {
    long before = quietBytesSent();
    try (FileSystem fs = fs(plan(), "8m"); FSDataInputStream in = fs.open(new Path(base + "/other.bin"))) {
      assertArrayEquals(Arrays.copyOfRange(data, MIB, 2 * MIB), readAt(in, MIB, MIB, false));
    }
    assertEquals(MIB, bytesSentSince(before, MIB));
    before = server.stats().bytesSent();
    try (FileSystem fs = fs(plan(), "0"); FSDataInputStream in = fs.open(new Path(base + "/data.bin"))) {
      assertArrayEquals(Arrays.copyOfRange(data, MIB, 3 * MIB), readAt(in, MIB, 2 * MIB, false));
      Thread.sleep(50);
    }
    assertEquals(2L * MIB, bytesSentSince(before, 2L * MIB));
  }

  @Test
  void aPieceThatFailsLeavesTheReadingToDirectReads() throws Exception {
    // A plan that runs past the end of the file (a footer that lies): its piece fails.
    ReadPlan past = ReadPlan.of(base + "/other.bin", List.of(new long[] {MIB, 4L * MIB}));
    try (FileSystem fs = fs(past, "8m"); FSDataInputStream in = fs.open(new Path(base + "/other.bin"))) {
      assertArrayEquals(Arrays.copyOfRange(data, MIB, 2 * MIB), readAt(in, MIB, MIB, false));
      assertArrayEquals(Arrays.copyOfRange(data, MIB + 5, MIB + 105), readAt(in, MIB + 5, 100, true));
    }
  }

  @Test
  void planRejectsOverlappingRangesAndFindsTheRangeOfAPosition() {
    assertThrows(IllegalArgumentException.class, () -> new ReadPlan("x", new long[] {10, 10, 15, 10}));
    assertThrows(IllegalArgumentException.class, () -> new ReadPlan("x", new long[] {10, 0}));
    ReadPlan p = ReadPlan.of("x", List.of(new long[] {0, 10}, new long[] {10, 5}, new long[] {20, 5}));
    assertArrayEquals(new long[] {0, 15, 20, 5}, p.ranges());
    assertEquals(0, p.rangeContaining(14));
    assertEquals(-1, p.rangeContaining(15));
    assertEquals(1, p.rangeContaining(24));
    assertEquals(-1, p.rangeContaining(25));
    Configuration conf = new Configuration(false);
    p.set(conf);
    assertArrayEquals(p.ranges(), ReadPlan.get(conf).ranges());
    assertEquals("x", ReadPlan.get(conf).uri());
  }

  /** Seeks and reads {@code n} bytes in 1 MiB reads, into heap or direct buffers as Parquet may. */
  private static byte[] readAt(FSDataInputStream in, long position, int n, boolean direct) throws IOException {
    in.seek(position);
    ByteBuffer all = direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    while (all.hasRemaining()) {
      ByteBuffer part = all.slice();
      part.limit(Math.min(part.remaining(), MIB));
      int got = in.read(part);
      assertTrue(got > 0, "read returned " + got);
      all.position(all.position() + got);
    }
    byte[] out = new byte[n];
    all.flip().get(out);
    return out;
  }

  /** Waits up to 5 s for the server to have sent {@code expected} bytes since {@code before}. */
  /**
   * The server's bytes sent once nothing more is being sent: a stream an earlier test closed
   * may still have a piece on its way, which would be counted against this test.
   */
  private static long quietBytesSent() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    long sent = server.stats().bytesSent();
    while (System.nanoTime() < deadline) {
      Thread.sleep(100);
      long now = server.stats().bytesSent();
      if (now == sent) {
        return sent;
      }
      sent = now;
    }
    return sent;
  }

  private static long bytesSentSince(long before, long expected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    long sent = server.stats().bytesSent() - before;
    while (sent < expected && System.nanoTime() < deadline) {
      Thread.sleep(1);
      sent = server.stats().bytesSent() - before;
    }
    return sent;
  }
}
