package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Frames one by one; {@link FramesFuzzTest} fuzzes the decoder with jqwik. */
class FramesTest {
  static final byte[] NONCE = new byte[Protocol.NONCE_BYTES];

  static List<Message> samples() {
    return List.of(
        new Hello(1, Protocol.CAP_TCP | Protocol.CAP_CRC32C, NONCE),
        new HelloAck(1, Protocol.CAP_TCP, true, NONCE, 1 << 20),
        new AuthResponse(new byte[Protocol.MAC_BYTES]),
        new AuthOk(new byte[Protocol.MAC_BYTES]),
        new ListRequest(7, "dir/sub", "dir/sub/a/b.parquet"),
        new ListResponse(8, List.of(new FileMeta("a/b.parquet", 10, 20, false,
                new FileVersion("(dev=803,ino=12)", 10, 20_000_001L)),
            new FileMeta("ü/ñ.bin", 0, -1, false, FileVersion.ANY)), true),
        new StatRequest(9, "/x"),
        new StatResponse(10, new FileMeta("", 0, 5, true, FileVersion.ANY)),
        new ReadRequest(11, "f", 1L << 40, 4096),
        new ReadRequest(11, "f", new FileVersion("(dev=803,ino=12)", 1L << 41, 7), 1L << 40, 4096),
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
    manyEntries.put(MessageType.LIST_RESPONSE.id()).putLong(1).put((byte) 1)
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
}
