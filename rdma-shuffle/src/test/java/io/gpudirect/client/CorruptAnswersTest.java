package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.CorruptAnswerException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Control answers damaged on the way: a real server behind a proxy that flips one byte of a
 * STAT or LIST answer, or of the HELLO_ACK, on every connection or on the first. The client
 * must refuse the answer as corrupt, naming the server and what it asked, and never return a
 * wrong size or version (which, before control frames had a CRC32C, came back as a size off by
 * some bytes, or as a "file changed" on the next read).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CorruptAnswersTest {
  @TempDir static Path root;
  static BlockServer server;
  /** What the server says when nothing is in the way. */
  static FileEntry clean;
  static List<FileEntry> cleanListing;

  @BeforeAll
  static void start() throws IOException {
    TestFiles.write(root.resolve("f.bin"), 300_000, 7);
    TestFiles.write(root.resolve("g.bin"), 1000, 8);
    server = BlockServer.builder().root(root).port(0).build().start();
    try (BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        config(0).build())) {
      clean = c.stat("f.bin");
      cleanListing = c.list("/");
    }
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void aFlippedByteInAStatAnswersSizeIsRefusedAsCorrupt() throws Exception {
    long at = statAnswer() + statEntryLengthLastByte();
    CorruptAnswerException e = statThroughFlips(at, Integer.MAX_VALUE);
    assertNamesCorruption(e, "access 'f.bin'", "STAT_RESPONSE");
  }

  @Test
  void aFlippedByteInAStatAnswersVersionIsRefusedAsCorruptNotAsAChangedFile() throws Exception {
    int fileId = clean.version().fileId().getBytes(StandardCharsets.UTF_8).length;
    // The last byte of the version's modification time: path, length, millis, directory, id, size.
    long at = statAnswer() + statEntryLengthLastByte() + 8 + 1 + 4 + fileId + 8 + 8;
    CorruptAnswerException e = statThroughFlips(at, Integer.MAX_VALUE);
    assertNamesCorruption(e, "access 'f.bin'", "STAT_RESPONSE");
    assertFalse(e.getMessage().toLowerCase().contains("changed"), e.getMessage());
  }

  @Test
  void aStatAnswerCorruptOnceIsRetriedAndRightOnANewConnection() throws Exception {
    try (LoopbackCutter once = new LoopbackCutter(server.port(),
            statAnswer() + statEntryLengthLastByte(), 1).corruptInsteadOfClose(Long.MAX_VALUE);
        BlockClient c = BlockClient.connect(address(once), config(2).build())) {
      assertEquals(clean, c.stat("f.bin"));
      assertEquals(1, once.faultsInjected(), "no byte was flipped");
      assertEquals(1, c.stats().retries());
    }
  }

  @Test
  void aFlippedByteInAListingEntryIsRefusedAsCorrupt() throws Exception {
    String first = cleanListing.get(0).path();
    // LIST_RESPONSE: frame header, id, last, count, then the first entry: path, its length.
    long at = answersStart() + Frames.HEADER_BYTES + 8 + 1 + 4 + 4
        + first.getBytes(StandardCharsets.UTF_8).length + 7;
    try (LoopbackCutter always = flipping(at, Integer.MAX_VALUE);
        BlockClient c = BlockClient.connect(address(always), config(2).build())) {
      CorruptAnswerException e = assertThrows(CorruptAnswerException.class, () -> c.list("/"));
      assertNamesCorruption(e, "list '/'", "LIST_RESPONSE");
      assertTrue(e.getMessage().contains("127.0.0.1:" + always.port()), e.getMessage());
    }
  }

  @Test
  void aFlippedByteInTheHelloAckFailsTheConnectionAsCorrupt() throws Exception {
    // Its capabilities' lowest byte: magic, frame header, version u16, then 8 bytes.
    long at = Protocol.MAGIC.length + Frames.HEADER_BYTES + 2 + 7;
    try (LoopbackCutter always = flipping(at, Integer.MAX_VALUE)) {
      Exception e = assertThrows(Exception.class,
          () -> BlockClient.connect(address(always), config(1).build()).close());
      assertTrue(e.getMessage().contains("Corrupt answer from gpudirect server 127.0.0.1:"
          + always.port() + " in the handshake")
          && e.getMessage().contains("CRC32C mismatch in the HELLO_ACK frame"), e.getMessage());
    }
  }

  private static CorruptAnswerException statThroughFlips(long at, int connections) throws Exception {
    try (LoopbackCutter cutter = flipping(at, connections);
        BlockClient c = BlockClient.connect(address(cutter), config(2).build())) {
      CorruptAnswerException e = assertThrows(CorruptAnswerException.class, () -> c.stat("f.bin"));
      assertEquals(3, cutter.faultsInjected(), "a byte flipped in each attempt");
      assertTrue(e.getMessage().contains("127.0.0.1:" + cutter.port()), e.getMessage());
      return e;
    }
  }

  private static void assertNamesCorruption(CorruptAnswerException e, String what, String frame) {
    assertTrue(e.getMessage().contains("Cannot " + what + " on gpudirect server")
        && e.getMessage().contains("still corrupt after 3 attempt(s)")
        && e.getMessage().contains("CRC32C mismatch in the " + frame + " frame"), e.getMessage());
  }

  /** Where the first answer starts in what the server sends: after its magic and HELLO_ACK. */
  private static long answersStart() {
    return Protocol.MAGIC.length + Frames.frameLength(new HelloAck(Protocol.VERSION, 0, false,
        new byte[Protocol.NONCE_BYTES], Protocol.DEFAULT_MAX_READ_LENGTH));
  }

  /** Where the STAT answer's entry starts (the first answer on the connection). */
  private static long statAnswer() {
    return answersStart() + Frames.HEADER_BYTES + 8;
  }

  /** From the entry's start, its length's lowest byte: after the path string. */
  private static long statEntryLengthLastByte() {
    return 4 + clean.path().getBytes(StandardCharsets.UTF_8).length + 7;
  }

  private static LoopbackCutter flipping(long at, int connections) throws IOException {
    return new LoopbackCutter(server.port(), at, connections).corruptInsteadOfClose(Long.MAX_VALUE);
  }

  private static InetSocketAddress address(LoopbackCutter cutter) {
    return new InetSocketAddress("127.0.0.1", cutter.port());
  }

  private static ClientConfig.Builder config(int retries) {
    return ClientConfig.builder().streams(1).transport("tcp").maxRetries(retries)
        .retryBackoff(Duration.ofMillis(1));
  }
}
