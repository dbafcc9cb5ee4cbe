package io.gpudirect.protocol;

import static io.gpudirect.testing.FrameChecksums.sealed;
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
        new Hello(Protocol.VERSION, Protocol.CAP_TCP | Protocol.CAP_CRC32C, NONCE),
        new HelloAck(Protocol.VERSION, Protocol.CAP_TCP, true, NONCE, 1 << 20),
        new AuthResponse(new byte[Protocol.MAC_BYTES]),
        new AuthOk(new byte[Protocol.MAC_BYTES]),
        new ListRequest(7, "dir/sub", "dir/sub/a/b.parquet"),
        new ListResponse(8, List.of(new FileMeta("a/b.parquet", 10, 20, false,
                new FileVersion("(dev=803,ino=12)", 10, 20_000_001L, 20_000_002L)),
            new FileMeta("ü/ñ.bin", 0, -1, false, FileVersion.ANY)), true, ""),
        ListResponse.more(8, List.of(), "a/link-to-nowhere"),
        new StatRequest(9, "/x"),
        new StatResponse(10, new FileMeta("", 0, 5, true, FileVersion.ANY)),
        new ReadRequest(11, "f", 1L << 40, 4096),
        new ReadRequest(11, "f", new FileVersion("(dev=803,ino=12)", 1L << 41, 7, 8), 1L << 40, 4096),
        new ReadData(12, 5, 6),
        new ErrorResponse(13, ErrorCode.OUTSIDE_ROOT, "no"),
        new StatusRequest(14),
        new StatusResponse(15, java.util.Map.of("bytesSent", 1L << 40, "errors", 0L)),
        new StatusResponse(16, java.util.Map.of()),
        new ShuffleRead(17, new ShuffleBlockId(3, 1L << 40, 5, 9), 0, 1 << 20, FileVersion.ANY),
        new ShuffleRead(18, ShuffleBlockId.of(3, 4, 5), 1 << 20, 1 << 20,
            new FileVersion("(dev=803,ino=12)", 99, 7, 8)),
        new ShuffleData(19, 1L << 33, new FileVersion("(dev=803,ino=12)", 1L << 33, 7, 8), 1 << 20, 4096),
        new ErrorResponse(20, ErrorCode.CORRUPT_MAP_OUTPUT, "its index is 29 bytes"),
        new RdmaShuffleRead(new ShuffleRead(21, ShuffleBlockId.of(3, 4, 5), 1 << 20, 1 << 20,
            new FileVersion("(dev=803,ino=12)", 99, 7, 8)), 0x7f00_1234_5000L, 0x1234_5678),
        new RdmaShuffleDone(new ShuffleData(22, 1L << 33, new FileVersion("(dev=803,ino=12)", 1L << 33, 7, 8),
            1 << 20, 4096), true, 0xcafe_f00d),
        new RdmaShuffleDone(new ShuffleData(23, 0, FileVersion.ANY, 0, 0), false, 0),
        new ShuffleData(24, 1L << 33, new FileVersion("(dev=803,ino=12)", 1L << 33, 7, 8), 1 << 20, 4096,
            new PartitionChecksums(ChecksumAlgorithm.ADLER32, 1000, new int[] {3, 5},
                new long[] {1 << 20, 1L << 32}, new int[] {0xcafe_f00d, 7})),
        new RdmaShuffleDone(new ShuffleData(25, 300, FileVersion.ANY, 0, 300,
            new PartitionChecksums(ChecksumAlgorithm.CRC32C, 0, new int[] {0}, new long[] {300}, new int[] {-1})),
            false, 0));
  }

  /**
   * Spark's checksums in an answer must list exactly the non-empty partitions of the block that
   * hold the window's bytes, end to end, by rising reduce ids of the block: anything else is no
   * answer to the window (a server that lists too few would leave bytes unchecked).
   */
  @Test
  void partitionChecksumsMustCoverExactlyTheWindow() {
    ShuffleRead first = new ShuffleRead(1, new ShuffleBlockId(0, 1, 2, 6), 0, 100, FileVersion.ANY);
    assertTrue(data(250, 0, 100, 0, new int[] {2, 4}, 60, 90).answers(first));
    assertTrue(data(250, 0, 100, 0, new int[] {3}, 250).answers(first));
    assertTrue(!data(250, 0, 100, 0, new int[] {2}, 60).answers(first), "the window's end left out");
    assertTrue(!data(250, 0, 100, 0, new int[] {2, 4, 5}, 60, 90, 100).answers(first), "one past the window");
    assertTrue(!data(250, 0, 100, 10, new int[] {2, 4}, 60, 90).answers(first), "its start left out");
    assertTrue(!data(250, 0, 100, 0, new int[] {2, 6}, 60, 190).answers(first), "a reduce id not the block's");
    assertTrue(!data(250, 0, 100, 0, new int[] {4, 3}, 60, 190).answers(first), "reduce ids going back");
    assertTrue(!data(250, 0, 100, 0, new int[] {2, 3}, 60, 0).answers(first), "an empty partition");
    assertTrue(!data(250, 0, 100, 0, new int[] {2, 3}, 60, 300).answers(first), "past the block");
    ShuffleRead next = new ShuffleRead(1, new ShuffleBlockId(0, 1, 2, 6), 100, 100, FileVersion.ANY);
    assertTrue(data(250, 100, 100, 60, new int[] {4, 5}, 90, 100).answers(next),
        "the partition the window starts in begins in the one before");
  }

  private static ShuffleData data(long blockLength, long offset, int length, long firstStart, int[] reduceIds,
      long... lengths) {
    return new ShuffleData(1, blockLength, FileVersion.ANY, offset, length,
        new PartitionChecksums(ChecksumAlgorithm.CRC32, firstStart, reduceIds, lengths, new int[lengths.length]));
  }

  /** Ids a reducer can never mean are refused off the wire, naming the field and the ids. */
  @Test
  void aShuffleReadOfIdsNamingNoBlockIsRefused() {
    int[][] wrong = {{-1, 0, 1}, {0, 0, 0}, {0, 5, 4}, {0, -3, 1}};
    for (int[] ids : wrong) {
      ByteBuffer b = ByteBuffer.allocate(128);
      b.put(MessageType.SHUFFLE_READ.id()).putLong(1).putInt(ids[0]).putLong(2).putInt(ids[1]).putInt(ids[2])
          .putLong(0).putInt(4096);
      FileVersion.ANY.encode(b);
      ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(b.flip())));
      assertTrue(e.getMessage().contains("SHUFFLE_READ block") && e.getMessage().contains("shuffle " + ids[0]),
          e.getMessage());
    }
    ByteBuffer negativeMap = ByteBuffer.allocate(128);
    negativeMap.put(MessageType.SHUFFLE_READ.id()).putLong(1).putInt(0).putLong(-2).putInt(0).putInt(1)
        .putLong(0).putInt(4096);
    FileVersion.ANY.encode(negativeMap);
    ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(negativeMap.flip())));
    assertTrue(e.getMessage().contains("map -2"), e.getMessage());
  }

  /** A client takes an answer only for the window it asked: anything else closes the connection. */
  @Test
  void aShuffleDataAnswersOnlyTheWindowAskedFor() {
    FileVersion v = new FileVersion("(dev=803,ino=12)", 300, 7, 8);
    ShuffleRead first = new ShuffleRead(1, ShuffleBlockId.of(0, 1, 2), 0, 100, FileVersion.ANY);
    assertTrue(new ShuffleData(1, 250, v, 0, 100).answers(first));
    assertTrue(new ShuffleData(1, 40, v, 0, 40).answers(first));
    assertTrue(new ShuffleData(1, 0, FileVersion.ANY, 0, 0).answers(first));
    assertTrue(!new ShuffleData(2, 250, v, 0, 100).answers(first), "another request's");
    assertTrue(!new ShuffleData(1, 250, v, 0, 99).answers(first), "short of the window and of the block");
    assertTrue(!new ShuffleData(1, 40, v, 0, 41).answers(first), "past the block");
    assertTrue(!new ShuffleData(1, 250, v, 10, 100).answers(first), "another window");
    ShuffleRead next = new ShuffleRead(3, ShuffleBlockId.of(0, 1, 2), 100, 100, v);
    assertTrue(new ShuffleData(3, 250, v, 100, 100).answers(next));
    assertTrue(!new ShuffleData(3, 250, new FileVersion("(dev=803,ino=13)", 300, 7, 8), 100, 100).answers(next),
        "another version of the data file");
  }

  @Test
  void everyMessageRoundTrips() {
    for (Message m : samples()) {
      ByteBuffer frame = Frames.encode(m);
      int checksum = m.type() == MessageType.READ_DATA ? 0 : Frames.CHECKSUM_BYTES;
      assertEquals(Frames.HEADER_BYTES + m.encodedLength() + checksum, frame.remaining());
      assertEquals(1 + m.encodedLength() + checksum, frame.getInt());
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
    ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(huge)));
    assertTrue(e.getMessage().contains("STAT path length"), e.getMessage());
    ByteBuffer manyEntries = ByteBuffer.allocate(64);
    manyEntries.put(MessageType.LIST_RESPONSE.id()).putLong(1).put((byte) 1)
        .putInt(Integer.MAX_VALUE).flip();
    e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(manyEntries)));
    assertTrue(e.getMessage().contains("entry count"), e.getMessage());
  }

  /** A page that is not the last says where the next goes on; the last says nothing. */
  @Test
  void aListPageNamesACursorExactlyWhenMoreFollows() {
    for (boolean last : new boolean[] {true, false}) {
      ByteBuffer page = ByteBuffer.allocate(64);
      page.put(MessageType.LIST_RESPONSE.id()).putLong(1).put((byte) (last ? 1 : 0)).putInt(0);
      byte[] cursor = (last ? "a/b" : "").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      page.putInt(cursor.length).put(cursor).flip();
      ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(page)));
      assertTrue(e.getMessage().contains(last ? "is the last page but names a cursor"
          : "is not the last page but names no cursor"), e.getMessage());
    }
  }

  @Test
  void truncatedAndTrailingBytesAreErrors() {
    ByteBuffer full = Frames.encode(new ReadRequest(1, "abc", 0, 10));
    full.getInt();
    ByteBuffer content = full.duplicate().limit(full.limit() - Frames.CHECKSUM_BYTES);
    ByteBuffer cut = sealed(content.duplicate().limit(content.limit() - 2));
    assertTrue(assertThrows(ProtocolException.class, () -> Frames.decode(cut))
        .getMessage().contains("Truncated READ"));
    ByteBuffer longer = sealed(ByteBuffer.allocate(content.remaining() + 1).put(content.duplicate())
        .put((byte) 0).flip());
    assertTrue(assertThrows(ProtocolException.class, () -> Frames.decode(longer))
        .getMessage().contains("trailing"));
  }

  /** One byte changed anywhere in a frame but READ_DATA's, its checksum included, is caught as corruption. */
  @Test
  void anyChangedByteIsCorruption() {
    for (Message m : samples()) {
      if (m.type() == MessageType.READ_DATA) {
        continue;
      }
      byte[] frame = Frames.encode(m).array();
      for (int at = 4; at < frame.length; at++) {
        for (int bit = 0; bit < 8; bit++) {
          byte[] changed = frame.clone();
          changed[at] ^= (byte) (1 << bit);
          ByteBuffer content = ByteBuffer.wrap(changed, 4, changed.length - 4);
          if (changed[4] != frame[4]) {
            // Another type byte: refused, as corrupt unless no such type exists, or READ_DATA,
            // whose fields the client checks against its request.
            try {
              assertEquals(MessageType.READ_DATA, Frames.decode(content).type(), m.type() + " byte " + at);
            } catch (ProtocolException refused) {
              // as it should be
            }
            continue;
          }
          CorruptFrameException e = assertThrows(CorruptFrameException.class,
              () -> Frames.decode(content), m.type() + " byte " + at);
          assertTrue(e.getMessage().contains("CRC32C mismatch in the " + m.type() + " frame"),
              e.getMessage());
        }
      }
    }
  }

  /**
   * A peer of version 3 or earlier sends frames without checksums: its HELLO is read as far as
   * its version, and its UNSUPPORTED_VERSION refusal is read whole, so either side says which
   * versions met; any other frame without its checksum is corruption.
   */
  @Test
  void aPeerOfAnotherVersionIsToldWhichVersionsMet() {
    ByteBuffer v3Hello = ByteBuffer.allocate(1 + 2 + 8 + Protocol.NONCE_BYTES)
        .put(MessageType.HELLO.id()).putShort((short) 3).putLong(Protocol.CAP_TCP).put(NONCE).flip();
    assertEquals(3, ((Hello) Frames.decode(v3Hello)).version());

    ByteBuffer refusal = Frames.encodeVersionRefusal(new ErrorResponse(ErrorResponse.CONNECTION,
        ErrorCode.UNSUPPORTED_VERSION, "server speaks version 3"));
    refusal.getInt();
    ErrorResponse e = (ErrorResponse) Frames.decode(refusal);
    assertEquals(ErrorCode.UNSUPPORTED_VERSION, e.code());
    assertEquals("server speaks version 3", e.message());

    ByteBuffer otherError = Frames.encodeVersionRefusal(new ErrorResponse(7, ErrorCode.NOT_FOUND, "x"));
    otherError.getInt();
    assertThrows(CorruptFrameException.class, () -> Frames.decode(otherError));
  }

  @Test
  void badMagicShowsWhatCame() {
    byte[] http = "HTTP/1.1".getBytes();
    ProtocolException e = assertThrows(ProtocolException.class,
        () -> Protocol.checkMagic(http, 4, "server x:1"));
    assertTrue(e.getMessage().contains("'HTTP'") && e.getMessage().contains("x:1"), e.getMessage());
  }
}
