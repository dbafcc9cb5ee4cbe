package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class FramesTest {
  static final byte[] NONCE = new byte[Protocol.NONCE_BYTES];

  static List<Message> samples() {
    return List.of(
        new Hello(1, Protocol.CAP_TCP | Protocol.CAP_CRC32C, NONCE),
        new HelloAck(1, Protocol.CAP_TCP, true, NONCE, 1 << 20),
        new AuthResponse(new byte[Protocol.MAC_BYTES]),
        new AuthOk(new byte[Protocol.MAC_BYTES]),
        new ListRequest(7, "dir/sub", 3),
        new ListResponse(8, List.of(new FileMeta("a/b.parquet", 10, 20, false),
            new FileMeta("ü/ñ.bin", 0, -1, false)), -1),
        new StatRequest(9, "/x"),
        new StatResponse(10, new FileMeta("", 0, 5, true)),
        new ReadRequest(11, "f", 1L << 40, 4096),
        new ReadData(12, 5, 6),
        new ErrorResponse(13, ErrorCode.OUTSIDE_ROOT, "no"),
        new StatusRequest(14),
        new StatusResponse(15, java.util.Map.of("bytesSent", 1L << 40, "errors", 0L)),
        new StatusResponse(16, java.util.Map.of()));
  }

  @Test
  void everyMessageRoundTrips() {
    for (Message m : samples()) {
      ByteBuffer frame = Frames.encode(m);
      assertEquals(Frames.HEADER_BYTES + m.encodedLength(), frame.remaining());
      assertEquals(1 + m.encodedLength(), frame.getInt());
      Message back = Frames.decode(frame);
      assertEquals(m.type(), back.type());
      assertArrayEquals(Frames.encode(m).array(), Frames.encode(back).array(), m.type().name());
    }
  }

  @Test
  void unknownTypeIsNamed() {
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> Frames.decode(ByteBuffer.wrap(new byte[] {(byte) 200, 0, 0})));
    assertTrue(e.getMessage().contains("Unknown message type 200"), e.getMessage());
  }

  @Test
  void lengthsAreBoundedBeforeAllocation() {
    assertThrows(ProtocolException.class, () -> Frames.checkLength(Protocol.MAX_FRAME_BYTES + 1));
    assertThrows(ProtocolException.class, () -> Frames.checkLength(0));
    ByteBuffer huge = ByteBuffer.allocate(64);
    huge.put(MessageType.STAT.id()).putLong(1).putInt(Integer.MAX_VALUE).flip();
    ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(huge));
    assertTrue(e.getMessage().contains("STAT path length"), e.getMessage());
    ByteBuffer manyEntries = ByteBuffer.allocate(64);
    manyEntries.put(MessageType.LIST_RESPONSE.id()).putLong(1).putInt(-1)
        .putInt(Integer.MAX_VALUE).flip();
    e = assertThrows(ProtocolException.class, () -> Frames.decode(manyEntries));
    assertTrue(e.getMessage().contains("entry count"), e.getMessage());
  }

  @Test
  void truncatedAndTrailingBytesAreErrors() {
    ByteBuffer full = Frames.encode(new ReadRequest(1, "abc", 0, 10));
    full.getInt();
    ByteBuffer cut = full.duplicate().limit(full.limit() - 2);
    assertTrue(assertThrows(ProtocolException.class, () -> Frames.decode(cut))
        .getMessage().contains("READ"));
    ByteBuffer longer = ByteBuffer.allocate(full.remaining() + 1).put(full.duplicate()).put((byte) 0).flip();
    assertTrue(assertThrows(ProtocolException.class, () -> Frames.decode(longer))
        .getMessage().contains("trailing"));
  }

  @Test
  void badMagicShowsWhatCame() {
    byte[] http = "HTTP/1.1".getBytes();
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> Protocol.checkMagic(http, 4, "server x:1"));
    assertTrue(e.getMessage().contains("'HTTP'") && e.getMessage().contains("x:1"), e.getMessage());
  }

  /** Random and mutated frames: each ends in a message or a ProtocolException, quickly. */
  @Test
  // Takes about a second; the bound catches a hang, with room for a machine busy with other builds.
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void fuzzDecoder() throws IOException {
    Random random = new Random(0x6770756469726563L);
    List<Message> samples = samples();
    int decoded = 0;
    for (int i = 0; i < 200_000; i++) {
      byte[] bytes;
      if (i % 2 == 0) {
        bytes = Frames.encode(samples.get(random.nextInt(samples.size()))).array();
        int flips = 1 + random.nextInt(4);
        for (int f = 0; f < flips; f++) {
          bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
        }
        if (random.nextInt(4) == 0) {
          bytes = java.util.Arrays.copyOf(bytes, random.nextInt(bytes.length + 8));
        }
      } else {
        bytes = new byte[random.nextInt(64)];
        random.nextBytes(bytes);
      }
      try {
        Message m = Frames.read(Channels.newChannel(new ByteArrayInputStream(bytes)));
        Frames.encode(m);
        decoded++;
      } catch (ProtocolException | EOFException expected) {
        // the only acceptable failures
      }
    }
    assertTrue(decoded > 1000, "mutations should still decode sometimes: " + decoded);
  }

  /**
   * Structure-aware mutations straight into {@link Frames#decode}: a count, length or id field
   * overwritten with a boundary value (0, -1, the limits, huge sizes) must be refused before
   * anything of that size is allocated. Any exception other than ProtocolException, or an
   * OutOfMemoryError, fails the test; a decoded message must encode and decode to itself.
   */
  @Test
  @Timeout(value = 20, unit = TimeUnit.SECONDS)
  void fuzzDecodeWithBoundaryValues() {
    Random random = new Random(0x66757a7aL);
    long[] boundaries = {0, 1, -1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 4096, 4097, 8192, 8193,
        Protocol.MAX_FRAME_BYTES, Protocol.MAX_FRAME_BYTES + 1, Integer.MAX_VALUE, Integer.MIN_VALUE,
        Long.MAX_VALUE, Long.MIN_VALUE};
    int[] widths = {1, 2, 4, 8};
    List<Message> samples = samples();
    int inputs = 0;
    int decoded = 0;
    for (int i = 0; i < 100_000; i++) {
      ByteBuffer frame = Frames.encode(samples.get(random.nextInt(samples.size())));
      byte[] content = java.util.Arrays.copyOfRange(frame.array(), 4, frame.limit());
      int mutations = 1 + random.nextInt(3);
      for (int m = 0; m < mutations && content.length > 1; m++) {
        int width = widths[random.nextInt(widths.length)];
        int at = 1 + random.nextInt(content.length - 1);
        long v = boundaries[random.nextInt(boundaries.length)];
        for (int b = width - 1; b >= 0 && at < content.length; b--, at++) {
          content[at] = (byte) (v >>> (8 * b));
        }
      }
      if (random.nextInt(8) == 0) {
        content[0] = (byte) random.nextInt(256);
      }
      inputs++;
      try {
        Message m = Frames.decode(ByteBuffer.wrap(content));
        byte[] encoded = Frames.encode(m).array();
        ByteBuffer again = ByteBuffer.wrap(encoded, 4, encoded.length - 4);
        assertArrayEquals(encoded, Frames.encode(Frames.decode(again)).array(), "re-encoded " + m.type() + " differs");
        decoded++;
      } catch (ProtocolException expected) {
        // the only acceptable failure
      }
    }
    System.out.println("fuzzDecodeWithBoundaryValues: " + inputs + " inputs, " + decoded + " decoded");
    assertTrue(decoded > 1000 && decoded < inputs, "both outcomes should occur: " + decoded + " of " + inputs);
  }
}
