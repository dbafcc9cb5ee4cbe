package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.FrameChecksums;
import io.gpudirect.testing.FuzzTries;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.statistics.Statistics;

/**
 * jqwik fuzzing of the protocol decoder, from fixed seeds so that CI is deterministic. Every
 * input ends in a message that encodes and decodes to itself, or in a {@link ProtocolException}
 * (or, for a frame cut short on the wire, an {@link EOFException}); any other exception, an
 * {@link OutOfMemoryError} from a length trusted before it was checked, or one input taking
 * longer than {@link #TRY_BOUND_NANOS} of CPU fails the property. Three generators:
 * <ul>
 *   <li>random bytes read as a frame off a channel;</li>
 *   <li>valid frames of every message type with 1 to 4 bytes overwritten, and a quarter of
 *   them truncated or padded with zeros;</li>
 *   <li>structure-aware: valid frame contents with 1 to 3 fields (of 1, 2, 4 or 8 bytes)
 *   overwritten by boundary values (0, -1, the frame limit, huge sizes), which the decoder must
 *   refuse before allocating anything of that size, and an eighth with a random type byte.</li>
 * </ul>
 * {@code -Dgpudirect.fuzz.scale=N} runs N times the tries below (see {@link FuzzTries}).
 */
@AddLifecycleHook(FuzzTries.class)
class FramesFuzzTest {
  /**
   * Decoding a frame of at most a few hundred bytes takes microseconds; a second of this
   * thread's CPU means a loop gone wrong. CPU time, not wall time: on a loaded two-core machine
   * a try waited 2 s for a core and failed the wall-clock bound while decoding nothing wrong.
   */
  static final long TRY_BOUND_NANOS = 1_000_000_000L;
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
  static final List<Message> SAMPLES = FramesTest.samples();
  static final List<Long> BOUNDARIES = List.of(0L, 1L, -1L, 2L, 0x7fL, 0x80L, 0xffL, 0x7fffL, 0xffffL, 4096L,
      4097L, 8192L, 8193L, (long) Protocol.MAX_FRAME_BYTES, Protocol.MAX_FRAME_BYTES + 1L, (long) Integer.MAX_VALUE,
      (long) Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE);
  /** The frame's length prefix; {@link Frames#decode} takes what follows it, type byte first. */
  static final int PREFIX = Integer.BYTES;

  @Property(tries = 100_000, seed = "7453586457424455011")
  void randomBytesDecodeOrFailClearly(@ForAll @Size(max = 63) byte[] bytes) throws IOException {
    String outcome = "failed";
    try {
      outcome = readFrame(bytes) ? "decoded" : "refused";
    } finally {
      // Collected even when the try fails: were none collected, jqwik would report its empty
      // statistics instead of the failure.
      Statistics.label("outcome").collect(outcome);
    }
  }

  @Property(tries = 100_000, seed = "7453586457424455012")
  void mutatedFramesDecodeOrFailClearly(@ForAll("mutatedFrames") MutatedFrame frame) throws IOException {
    String outcome = "failed";
    try {
      outcome = readFrame(frame.bytes()) ? "decoded" : "refused";
    } finally {
      Statistics.label("outcome").collect(outcome);
    }
    // Mutations that leave a valid frame and ones that break it should both be common, or the
    // generator has drifted away from the decoder's interesting inputs.
    Statistics.label("outcome").coverage(c -> {
      c.check("decoded").percentage(p -> p >= 1);
      c.check("refused").percentage(p -> p >= 1);
    });
  }

  @Property(tries = 100_000, seed = "1718975098")
  void boundaryValuesAreRefusedBeforeAllocation(@ForAll("boundaryMutations") BoundaryMutation mutation) {
    byte[] content = mutation.content();
    long start = CPU.getCurrentThreadCpuTime();
    String outcome = "failed";
    try {
      Message m = Frames.decode(ByteBuffer.wrap(content));
      byte[] encoded = Frames.encode(m).array();
      ByteBuffer again = ByteBuffer.wrap(encoded, PREFIX, encoded.length - PREFIX);
      assertArrayEquals(encoded, Frames.encode(Frames.decode(again)).array(), "re-encoded " + m.type() + " differs");
      outcome = "decoded";
    } catch (ProtocolException expected) {
      outcome = "refused"; // the only acceptable failure
    } finally {
      Statistics.label("outcome").collect(outcome);
    }
    assertInBound(start, mutation::toString);
    Statistics.label("outcome").coverage(c -> {
      c.check("decoded").percentage(p -> p >= 1);
      c.check("refused").percentage(p -> p >= 1);
    });
  }

  /** Reads one frame of {@code bytes} off a channel: true if it decoded (and re-encodes), false if refused clearly. */
  private static boolean readFrame(byte[] bytes) throws IOException {
    long start = CPU.getCurrentThreadCpuTime();
    boolean decoded;
    try {
      Message m = Frames.read(Channels.newChannel(new ByteArrayInputStream(bytes)));
      byte[] encoded = Frames.encode(m).array();
      ByteBuffer again = ByteBuffer.wrap(encoded, PREFIX, encoded.length - PREFIX);
      assertArrayEquals(encoded, Frames.encode(Frames.decode(again)).array(), "re-encoded " + m.type() + " differs");
      decoded = true;
    } catch (ProtocolException | EOFException expected) {
      decoded = false; // the only acceptable failures
    }
    assertInBound(start, () -> Arrays.toString(bytes));
    return decoded;
  }

  private static void assertInBound(long start, Supplier<String> input) {
    long nanos = CPU.getCurrentThreadCpuTime() - start;
    assertTrue(nanos < TRY_BOUND_NANOS, () -> "decoding took " + nanos / 1_000_000 + " ms of CPU: " + input.get());
  }

  @Provide
  Arbitrary<MutatedFrame> mutatedFrames() {
    return Arbitraries.integers().between(0, SAMPLES.size() - 1).flatMap(sample -> {
      int length = Frames.encode(SAMPLES.get(sample)).limit();
      Arbitrary<Overwrite> overwrite = Combinators.combine(Arbitraries.integers().between(0, length - 1),
          Arbitraries.bytes()).as(Overwrite::new);
      // A quarter are cut anywhere in the frame or padded with up to 7 zeros after it.
      Arbitrary<Integer> length2 = Arbitraries.integers().between(0, length + 7).injectNull(0.75);
      return Combinators.combine(overwrite.list().ofMinSize(1).ofMaxSize(4), length2)
          .as((overwrites, cut) -> new MutatedFrame(sample, overwrites, cut));
    });
  }

  @Provide
  Arbitrary<BoundaryMutation> boundaryMutations() {
    return Arbitraries.integers().between(0, SAMPLES.size() - 1).flatMap(sample -> {
      int length = Frames.encode(SAMPLES.get(sample)).limit() - PREFIX;
      // Position 0 is the type byte; the fields start after it.
      Arbitrary<BoundaryWrite> write = Combinators.combine(Arbitraries.integers().between(1, length - 1),
          Arbitraries.of(1, 2, 4, 8), Arbitraries.of(BOUNDARIES)).as(BoundaryWrite::new);
      Arbitrary<Byte> type = Arbitraries.bytes().injectNull(0.875);
      return Combinators.combine(write.list().ofMinSize(1).ofMaxSize(3), type)
          .as((writes, t) -> new BoundaryMutation(sample, writes, t));
    });
  }

  /** A byte of a frame (length header included) overwritten with {@code value}. */
  record Overwrite(int at, byte value) {
  }

  /** Sample {@code sample}'s frame with {@code overwrites} applied, then cut or padded to {@code length} if not null. */
  record MutatedFrame(int sample, List<Overwrite> overwrites, Integer length) {
    byte[] bytes() {
      byte[] bytes = Frames.encode(SAMPLES.get(sample)).array();
      for (Overwrite o : overwrites) {
        bytes[o.at()] = o.value();
      }
      // Checksummed again, as a hostile peer would: the fields behind it are what is fuzzed.
      FrameChecksums.reseal(bytes);
      return length == null ? bytes : Arrays.copyOf(bytes, length);
    }

    @Override
    public String toString() {
      return SAMPLES.get(sample).type() + " frame, " + overwrites + (length == null ? "" : ", cut to " + length)
          + ": " + Arrays.toString(bytes());
    }
  }

  /** {@code width} big-endian bytes at {@code at} of a frame's content overwritten with {@code value}'s low bytes. */
  record BoundaryWrite(int at, int width, long value) {
  }

  /** Sample {@code sample}'s frame content (type byte onwards) with {@code writes}, and its type byte replaced if not null. */
  record BoundaryMutation(int sample, List<BoundaryWrite> writes, Byte type) {
    byte[] content() {
      ByteBuffer frame = Frames.encode(SAMPLES.get(sample));
      byte[] content = Arrays.copyOfRange(frame.array(), PREFIX, frame.limit());
      for (BoundaryWrite w : writes) {
        for (int b = w.width() - 1, at = w.at(); b >= 0 && at < content.length; b--, at++) {
          content[at] = (byte) (w.value() >>> (8 * b));
        }
      }
      if (type != null) {
        content[0] = type;
      }
      byte[] whole = new byte[PREFIX + content.length];
      System.arraycopy(content, 0, whole, PREFIX, content.length);
      FrameChecksums.reseal(whole);
      return Arrays.copyOfRange(whole, PREFIX, whole.length);
    }

    @Override
    public String toString() {
      return SAMPLES.get(sample).type() + " content, " + writes + (type == null ? "" : ", type byte " + type)
          + ": " + Arrays.toString(content());
    }
  }
}
