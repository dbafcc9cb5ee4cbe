package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection's SHUFFLE_READs found ahead of their answers ({@link ShuffleAnswers}): the windows
 * of requests come in behind one being sent are found meanwhile, answers still go out in request
 * order, a refusal at its turn, and windows found for a connection that ends are closed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShuffleWindowsAheadTest {
  /** Larger than the socket buffers of a peer that reads nothing: its sendfile waits. */
  private static final int BIG = 8 << 20;

  @TempDir
  Path dir;
  private SparkShuffleLayout layout;

  @BeforeEach
  void write() throws IOException {
    layout = new SparkShuffleLayout(List.of(dir.resolve("blockmgr-a")), 64);
    byte[] big = new byte[BIG];
    new Random(1).nextBytes(big);
    layout.write(1, 0, big);
    for (int m = 1; m <= 3; m++) {
      layout.write(1, m, bytes(m, 0), bytes(m, 1));
    }
  }

  @Test
  void windowsBehindAnAnswerBeingSentAreFoundMeanwhileAndClosedWhenTheConnectionEnds() throws Exception {
    try (BlockServer s = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).port(0).build().start()) {
      OpenMapOutputs files = s.context().shuffleDirectories().openFiles();
      try (RawPeer peer = new RawPeer(s.port(), 64 * 1024)) {
        peer.handshake();
        sendTogether(peer, read(1, 0, 0, BIG), read(2, 1, 0, 1 << 20), read(3, 2, 1, 1 << 20));
        assertInstanceOf(ShuffleData.class, peer.receive());
        // The peer reads no payload: the first answer's sendfile waits on it, and the two
        // windows behind it are found in the meantime, each holding its data file.
        awaitAtLeast(3, files::leases, "windows held: the one being sent and those found behind it");
      }
      awaitAtMost(0, files::leases, "windows found for a connection that ended are closed");
    }
  }

  @Test
  void answersGoOutInRequestOrderEachRefusalAtItsTurn() throws Exception {
    try (BlockServer s = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).port(0).build().start();
         RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      sendTogether(peer, read(1, 9, 0, 1 << 20), read(2, 1, 1, 1 << 20), read(3, 2, 7, 1 << 20),
          read(4, 3, 0, 1 << 20), read(5, 2, 0, 1 << 20));
      refused(peer.receive(), 1, ErrorCode.NOT_FOUND);
      served(peer, 2, bytes(1, 1));
      refused(peer.receive(), 3, ErrorCode.OUT_OF_RANGE);
      served(peer, 4, bytes(3, 0));
      served(peer, 5, bytes(2, 0));
      awaitAtMost(0, s.context().shuffleDirectories().openFiles()::leases, "every window closed once answered");
    }
  }

  @Test
  void aBrokenFrameReadAheadEndsTheConnectionOnlyAfterTheAnswersBeforeIt() throws Exception {
    try (BlockServer s = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).port(0).build().start();
         RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      ByteArrayOutputStream frames = new ByteArrayOutputStream();
      frames.write(encoded(read(1, 1, 0, 1 << 20)));
      frames.write(encoded(read(2, 2, 0, 1 << 20)));
      frames.write(new byte[] {0, 0, 0, 0});  // a frame of no bytes: no such frame
      peer.sendRaw(frames.toByteArray());
      served(peer, 1, bytes(1, 0));
      served(peer, 2, bytes(2, 0));
      ErrorResponse e = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(ErrorResponse.CONNECTION, e.requestId());
      assertEquals(ErrorCode.BAD_REQUEST, e.code(), e.message());
    }
  }

  private static ShuffleRead read(long id, int map, int reduce, int maxLength) {
    return new ShuffleRead(id, ShuffleBlockId.of(1, map, reduce), 0, maxLength, FileVersion.ANY);
  }

  /** In one write, so that the server reads them all at once. */
  private static void sendTogether(RawPeer peer, ShuffleRead... reads) throws IOException {
    ByteArrayOutputStream frames = new ByteArrayOutputStream();
    for (ShuffleRead r : reads) {
      frames.write(encoded(r));
    }
    peer.sendRaw(frames.toByteArray());
  }

  private static byte[] encoded(ShuffleRead r) {
    ByteBuffer b = Frames.encode(r);
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    return bytes;
  }

  private static void served(RawPeer peer, long id, byte[] expected) throws IOException {
    ShuffleData d = assertInstanceOf(ShuffleData.class, peer.receive());
    assertEquals(id, d.requestId());
    assertArrayEquals(expected, peer.payload(d.length()));
    assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());
  }

  private static void refused(Object answer, long id, ErrorCode code) {
    ErrorResponse e = assertInstanceOf(ErrorResponse.class, answer);
    assertEquals(id, e.requestId(), e.message());
    assertEquals(code, e.code(), e.message());
  }

  private static void awaitAtLeast(int n, IntSupplier count, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (count.getAsInt() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertTrue(count.getAsInt() >= n, what + ": " + count.getAsInt() + ", expected at least " + n);
  }

  private static void awaitAtMost(int n, IntSupplier count, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (count.getAsInt() > n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(n, count.getAsInt(), what);
  }

  private static byte[] bytes(int map, int reduce) {
    byte[] b = new byte[1000 + 100 * map + reduce];
    new Random(31L * map + reduce).nextBytes(b);
    return b;
  }
}
