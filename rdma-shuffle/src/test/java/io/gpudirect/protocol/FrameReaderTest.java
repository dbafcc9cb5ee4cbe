package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The frame reader both sides share, over a channel that counts its reads. */
class FrameReaderTest {
  /** Hands out its bytes at most {@code perRead} at a time, and counts the calls. */
  private static final class CountingChannel implements ReadableByteChannel {
    private final ByteBuffer bytes;
    private final int perRead;
    int reads;

    CountingChannel(byte[] bytes, int perRead) {
      this.bytes = ByteBuffer.wrap(bytes);
      this.perRead = perRead;
    }

    @Override
    public int read(ByteBuffer dst) {
      reads++;
      if (!bytes.hasRemaining()) {
        return -1;
      }
      int n = Math.min(perRead, Math.min(dst.remaining(), bytes.remaining()));
      dst.put(bytes.slice(bytes.position(), n));
      bytes.position(bytes.position() + n);
      return n;
    }

    int left() {
      return bytes.remaining();
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }

  private static byte[] frames(Message... messages) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Message m : messages) {
      ByteBuffer f = Frames.encode(m);
      out.write(f.array(), f.position(), f.remaining());
    }
    return out.toByteArray();
  }

  @Test
  void pipelinedFramesComeInOneReadAndTheCleanEndIsNull() throws Exception {
    List<Message> sent = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      sent.add(new ReadRequest(i, "dir/file-" + i + ".parquet", i * 4096L, 4096));
    }
    CountingChannel in = new CountingChannel(frames(sent.toArray(Message[]::new)), Integer.MAX_VALUE);
    FrameReader reader = new FrameReader(in, ByteBuffer.allocateDirect(16 * 1024));
    for (Message m : sent) {
      assertEquals(m, reader.next());
    }
    assertEquals(1, in.reads, "20 pipelined requests, one read");
    assertNull(reader.next());
  }

  @Test
  void aFrameLargerThanTheBufferIsReadWholeAndTheNextOneAfterIt() throws Exception {
    StringBuilder longPath = new StringBuilder();
    while (longPath.length() < 3000) {
      longPath.append("deeper/");
    }
    Message big = new StatRequest(1, longPath.toString());
    Message small = new StatusRequest(2);
    CountingChannel in = new CountingChannel(frames(big, small), 100);
    FrameReader reader = new FrameReader(in, ByteBuffer.allocateDirect(256));
    assertEquals(big, reader.next());
    assertEquals(small, reader.next());
    assertNull(reader.next());
  }

  @Test
  void aStreamEndingInsideAFrameAndACorruptFrameAreErrors() throws Exception {
    byte[] one = frames(new StatusRequest(3));
    byte[] cut = java.util.Arrays.copyOf(one, one.length - 2);
    assertThrows(EOFException.class,
        () -> new FrameReader(new CountingChannel(cut, 7), ByteBuffer.allocate(64)).next());
    byte[] flipped = one.clone();
    flipped[6] ^= 1;
    assertThrows(CorruptFrameException.class,
        () -> new FrameReader(new CountingChannel(flipped, 64), ByteBuffer.allocate(64)).next());
  }

  /** The client's case: raw payload bytes follow a READ_DATA frame and must not pass through the buffer. */
  @Test
  void aReadLimitLeavesWhatFollowsAFrameInTheChannel() throws Exception {
    byte[] header = frames(new ReadData(9, 0, 1000));
    byte[] payload = new byte[1000];
    java.util.Arrays.fill(payload, (byte) 7);
    byte[] wire = new byte[header.length + payload.length + 5];
    System.arraycopy(header, 0, wire, 0, header.length);
    System.arraycopy(payload, 0, wire, header.length, payload.length);
    wire[wire.length - 5] = ReadData.PAYLOAD_GOOD;
    CountingChannel in = new CountingChannel(wire, Integer.MAX_VALUE);
    int limit = header.length + 10;
    FrameReader reader = new FrameReader(in, ByteBuffer.allocateDirect(4096), needed -> limit);
    assertEquals(new ReadData(9, 0, 1000), reader.next());
    assertEquals(wire.length - limit, in.left(), "one read took no more than the limit");
    ByteBuffer dst = ByteBuffer.allocate(1000);
    reader.drainInto(dst);
    assertEquals(10, dst.position());
    while (dst.hasRemaining()) {
      in.read(dst);
    }
    assertEquals(ByteBuffer.wrap(payload), dst.flip());
    ByteBuffer trailer = reader.take(5);
    assertEquals(ReadData.PAYLOAD_GOOD, trailer.get());
    assertNull(reader.next());
  }

  @Test
  void skipReadsPastBytesLongerThanTheBuffer() throws Exception {
    byte[] junk = new byte[1000];
    byte[] after = frames(new StatusRequest(4));
    byte[] wire = new byte[junk.length + after.length];
    System.arraycopy(after, 0, wire, junk.length, after.length);
    FrameReader reader = new FrameReader(new CountingChannel(wire, 33), ByteBuffer.allocate(64));
    reader.skip(junk.length);
    assertEquals(new StatusRequest(4), reader.next());
  }
}
