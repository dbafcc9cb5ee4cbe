package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeded fuzzing of the Arrow IPC metadata validator: truncations and bit flips of the valid
 * files in {@code testdata/arrow}, each read through {@link ArrowIpcFile} over a
 * {@link FileChannel} of a temp copy. Every input ends, within seconds, in one of:
 * <ul>
 *   <li>a {@link GpuDirectException} naming the file: an {@link ArrowFormatException} for bad
 *   metadata, or a value Spark cannot hold (a timestamp in seconds past microseconds' range);</li>
 *   <li>data every value of which Spark's getters can read. A truncated file has no complete
 *   footer, so it must fail; a truncated stream may end early, so its rows must be a prefix of
 *   the unmutated read. A flipped bit inside a value buffer is a different but valid value
 *   (Arrow IPC carries no checksum), so a flip is checked for readability only.</li>
 * </ul>
 * Any other exception, a hang, or Arrow memory still allocated afterwards fails the test.
 * Deterministic: the seed is fixed; {@code -Dgpudirect.fuzz.arrowInputs=N} (inputs per file,
 * 50 by default) widens the run.
 */
class ArrowIpcFuzzTest {
  static final Path ARROW = Paths.get(System.getProperty("gpudirect.testdata"), "arrow");
  static final int INPUTS_PER_FILE = Integer.getInteger("gpudirect.fuzz.arrowInputs", 50);
  private static final int[] OUTCOMES = new int[4];

  @TempDir
  Path tmp;

  static Stream<String> files() throws IOException {
    try (Stream<Path> files = Files.list(ARROW)) {
      return files.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".arrow_file") || n.endsWith(".stream"))
          .sorted()
          .toList()
          .stream();
    }
  }

  @AfterAll
  static void report() {
    System.out.printf("ArrowIpcFuzzTest: %d inputs: %d failed clearly, %d read as the original, %d read as other"
        + " valid data, %d truncated streams read as a prefix%n", OUTCOMES[0] + OUTCOMES[1] + OUTCOMES[2] + OUTCOMES[3],
        OUTCOMES[0], OUTCOMES[1], OUTCOMES[2], OUTCOMES[3]);
  }

  @ParameterizedTest
  @MethodSource("files")
  void mutationsFailClearlyOrReadValidData(String name) throws IOException {
    byte[] original = Files.readAllBytes(ARROW.resolve(name));
    boolean stream = name.endsWith(".stream");
    // generated_decimal holds values wider than their declared precision on purpose: the
    // original already fails clearly, and its mutations are held to the same two outcomes.
    List<List<Object>> reference = read(original, name + "-original", stream, name.startsWith("generated_decimal"));
    Random random = new Random(name.hashCode() * 31L + 0x617272);
    for (int i = 0; i < INPUTS_PER_FILE; i++) {
      byte[] mutated;
      String what;
      boolean truncated = random.nextInt(4) == 0;
      if (truncated) {
        int length = random.nextInt(original.length);
        mutated = Arrays.copyOf(original, length);
        what = "truncated to " + length;
      } else {
        mutated = original.clone();
        StringBuilder flips = new StringBuilder("bits flipped at");
        int n = 1 + random.nextInt(3);
        for (int f = 0; f < n; f++) {
          int at = metadataBiasedOffset(random, original.length);
          mutated[at] ^= (byte) (1 << random.nextInt(8));
          flips.append(' ').append(at);
        }
        what = flips.toString();
      }
      String label = name + "-" + i;
      List<List<Object>> rows = read(mutated, label, stream, true);
      if (rows == null) {
        OUTCOMES[0]++;
      } else if (reference != null && rows.equals(reference)) {
        OUTCOMES[1]++;
      } else if (truncated) {
        assertTrue(stream, name + " " + what + " read " + rows.size() + " rows without its footer");
        assertTrue(reference != null, name + " " + what + " read although the whole stream does not");
        assertEquals(reference.subList(0, Math.min(rows.size(), reference.size())), rows,
            name + " " + what + ": a truncated stream must read a prefix of the original rows");
        OUTCOMES[3]++;
      } else {
        OUTCOMES[2]++;
      }
    }
  }

  /** Half the flips land in the first or last 512 bytes: the schema, the footer, the first batch's metadata. */
  private static int metadataBiasedOffset(Random random, int length) {
    int edge = Math.min(512, length);
    return switch (random.nextInt(4)) {
      case 0 -> random.nextInt(edge);
      case 1 -> length - 1 - random.nextInt(edge);
      default -> random.nextInt(length);
    };
  }

  /** All rows of {@code bytes} read as an IPC file or stream, or null when it failed clearly (if allowed to). */
  private List<List<Object>> read(byte[] bytes, String label, boolean stream, boolean mayFail) throws IOException {
    Path copy = tmp.resolve(label);
    Files.write(copy, bytes);
    String displayName = "gpudirect://127.0.0.1:7337/fuzz/" + label;
    try (RootAllocator root = new RootAllocator(1L << 30)) {
      List<List<Object>> rows = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> readAll(copy, displayName,
          stream, root, mayFail), () -> "reading " + label + " took too long");
      assertEquals(0, root.getAllocatedMemory(), "Arrow memory left allocated after " + label);
      return rows;
    } finally {
      Files.delete(copy);
    }
  }

  private static List<List<Object>> readAll(Path file, String displayName, boolean stream, BufferAllocator root,
      boolean mayFail) throws IOException {
    try (ArrowIpcFile ipc = ArrowIpcFile.open(FileChannel.open(file), displayName, stream, root)) {
      List<List<Object>> rows = new ArrayList<>();
      try (ArrowBatchReader reader = ipc.readBatches(0, stream ? Integer.MAX_VALUE : ipc.recordBatchCount(),
          ipc.sparkSchema())) {
        while (reader.next()) {
          rows.addAll(SparkValues.rows(reader.get(), ipc.sparkSchema()));
        }
      }
      return rows;
    } catch (GpuDirectException e) {
      if (!mayFail) {
        throw e;
      }
      assertTrue(e.getMessage().contains(displayName), "message does not name the file: " + e.getMessage());
      assertFalse(e.getCause() instanceof OutOfMemoryError, "ran out of memory: " + e.getMessage());
      return null;
    }
  }
}
