package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.FuzzTries;
import io.gpudirect.testing.NoLeaksExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * jqwik fuzzing of the Parquet footer path end to end: truncations and bit flips of the files
 * in {@code testdata/parquet}, mostly in the footer and its length, each served by a real
 * server and read with {@code spark.read.format("gpudirect")}. Each input ends within seconds
 * in an error naming the file or in rows; rows must equal what Spark's own reader gives on the
 * same mutated file (a mutated file has no other reference). After each input the server
 * still serves, and after all of them no buffer or server thread is left. The seed is fixed;
 * {@code -Dgpudirect.fuzz.scale=N} runs N times the tries (see {@link FuzzTries}).
 */
@AddLifecycleHook(FuzzTries.class)
class ParquetFooterFuzzIT {
  private static final Map<String, byte[]> SOURCES = new LinkedHashMap<>();
  private static Path root;
  private static ServerFixture fixture;
  private static long intactRows;
  private static int inputs;
  private static long slowestMillis;

  @BeforeContainer
  static void start() throws IOException {
    root = Files.createTempDirectory("parquet-fuzz");
    Files.createDirectories(root.resolve("fuzz"));
    Files.copy(LocalSpark.testdata().resolve("parquet/alltypes_plain.parquet"), root.resolve("intact.parquet"));
    try (Stream<Path> s = Files.list(LocalSpark.testdata().resolve("parquet"))) {
      for (Path p : s.filter(p -> p.toString().endsWith(".parquet")).sorted().toList()) {
        SOURCES.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    fixture = ServerFixture.serve(root);
    intactRows = LocalSpark.get().read().parquet(root.resolve("intact.parquet").toString()).count();
  }

  @AfterContainer
  static void stop() throws Exception {
    System.out.printf("ParquetFooterFuzzIT: %d inputs, slowest %d ms%n", inputs, slowestMillis);
    try {
      fixture.close();
      NoLeaksExtension.assertNoLeaks(ParquetFooterFuzzIT.class.getSimpleName());
    } finally {
      try (Stream<Path> all = Files.walk(root)) {
        for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  @Property(tries = 80, seed = "1885434481", edgeCases = EdgeCasesMode.NONE)
  void mutatedFootersFailClearlyOrReadAsSparkDoes(@ForAll("footerMutations") FooterMutation mutation)
      throws IOException {
    SparkSession spark = LocalSpark.get();
    String name = "m" + inputs++ + "-" + mutation.source();
    Path file = root.resolve("fuzz").resolve(name);
    Files.write(file, mutation.apply(SOURCES.get(mutation.source())));
    long start = System.nanoTime();
    Throwable failure = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      try {
        List<Row> rows = spark.read().format("gpudirect").load(fixture.uri("fuzz/" + name)).collectAsList();
        // It read: Spark's own reader on the same bytes is the reference, and must agree.
        assertEquals(spark.read().parquet(file.toString()).collectAsList(), rows,
            name + " (" + mutation + "): rows differ from Spark's reader");
        return null;
      } catch (Exception e) {
        return e;
      }
    }, () -> name + " (" + mutation + ") took too long");
    slowestMillis = Math.max(slowestMillis, (System.nanoTime() - start) / 1_000_000);
    if (failure != null) {
      String messages = messages(failure);
      assertTrue(messages.contains(name), name + " (" + mutation + "): the error must name the file: " + messages);
      assertFalse(messages.contains("OutOfMemoryError"), name + " (" + mutation + "): " + messages);
    }
    Statistics.label("outcome").collect(failure == null ? "read as Spark reads it" : "failed naming the file");
    Statistics.label("mutation").collect(mutation.kind());
    assertEquals(intactRows, spark.read().format("gpudirect").load(fixture.uri("intact.parquet")).count(),
        "the server must still serve after " + name);
  }

  @Provide
  Arbitrary<FooterMutation> footerMutations() {
    // No jqwik edge cases: mixed into the choice of file they would pile onto the first and last.
    return Arbitraries.of(List.copyOf(SOURCES.keySet())).flatMap(source -> {
      byte[] original = SOURCES.get(source);
      int length = original.length;
      int footerLength = (original[length - 8] & 0xff) | (original[length - 7] & 0xff) << 8
          | (original[length - 6] & 0xff) << 16 | (original[length - 5] & 0xff) << 24;
      int footerStart = length - 8 - footerLength;
      Arbitrary<Integer> bit = Arbitraries.integers().between(0, 7);
      // Cut anywhere, or at the footer's edges: before it, inside its length or the magic.
      Arbitrary<FooterMutation> truncation = Arbitraries.oneOf(Arbitraries.integers().between(0, length - 1),
          Arbitraries.of(footerStart, length - 8, length - 5, length - 1))
          .map(n -> new FooterMutation(source, "truncation", n, List.of()));
      // The footer length itself, the PAR1 magic, or the bytes just before them.
      Arbitrary<FooterMutation> tailFlip = Combinators.combine(Arbitraries.integers().between(length - 8, length - 1),
          bit).as((at, b) -> new FooterMutation(source, "flip in footer length or magic", null, List.of(at, b)));
      Arbitrary<FooterMutation> footerFlips = Combinators.combine(
          Arbitraries.integers().between(footerStart, length - 9), bit).as(List::of).list().ofMinSize(1).ofMaxSize(3)
          .map(flips -> new FooterMutation(source, "flips in footer", null,
              flips.stream().flatMap(List::stream).toList()));
      @SuppressWarnings("unchecked")
      Arbitrary<FooterMutation> any = Arbitraries.frequencyOf(Tuple.of(1, truncation), Tuple.of(1, tailFlip),
          Tuple.of(2, footerFlips));
      return any;
    });
  }

  /**
   * {@code source} cut to {@code length} bytes if that is not null, else with {@code flips}
   * applied: pairs of (byte offset, bit).
   */
  record FooterMutation(String source, String kind, Integer length, List<Integer> flips) {
    byte[] apply(byte[] original) {
      if (length != null) {
        return Arrays.copyOf(original, length);
      }
      byte[] mutated = original.clone();
      for (int i = 0; i < flips.size(); i += 2) {
        mutated[flips.get(i)] ^= (byte) (1 << flips.get(i + 1));
      }
      return mutated;
    }

    @Override
    public String toString() {
      return kind + (length != null ? " to " + length : " at (byte, bit) " + flips);
    }
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" | ");
    }
    return sb.toString();
  }
}
