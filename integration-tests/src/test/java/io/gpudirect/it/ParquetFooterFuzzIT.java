package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.NoLeaksExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded fuzzing of the Parquet footer path end to end: truncations and bit flips of the
 * files in {@code testdata/parquet}, mostly in the footer and its length, each served by a
 * real server and read with {@code spark.read.format("gpudirect")}. Each input ends within
 * seconds in an error naming the file or in rows; rows must equal what Spark's own reader
 * gives on the same mutated file (a mutated file has no other reference). After each input
 * the server still serves. {@code -Dgpudirect.fuzz.parquetInputs=N} (40 by default) widens it.
 */
@ExtendWith(NoLeaksExtension.class)
class ParquetFooterFuzzIT {
  static final int INPUTS = Integer.getInteger("gpudirect.fuzz.parquetInputs", 40);

  @TempDir
  static Path root;
  private static ServerFixture fixture;

  @BeforeAll
  static void start() throws IOException {
    Files.createDirectories(root.resolve("fuzz"));
    Files.copy(LocalSpark.testdata().resolve("parquet/alltypes_plain.parquet"), root.resolve("intact.parquet"));
    fixture = ServerFixture.serve(root);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void mutatedFootersFailClearlyOrReadAsSparkDoes() throws IOException {
    List<Path> sources;
    try (Stream<Path> s = Files.list(LocalSpark.testdata().resolve("parquet"))) {
      sources = s.filter(p -> p.toString().endsWith(".parquet")).sorted().toList();
    }
    SparkSession spark = LocalSpark.get();
    Random random = new Random(0x70617271);
    long intactRows = spark.read().parquet(root.resolve("intact.parquet").toString()).count();
    int failed = 0;
    int read = 0;
    long slowestMillis = 0;
    for (int i = 0; i < INPUTS; i++) {
      Path source = sources.get(random.nextInt(sources.size()));
      byte[] original = Files.readAllBytes(source);
      String what;
      byte[] mutated;
      int footerLength = (original[original.length - 8] & 0xff) | (original[original.length - 7] & 0xff) << 8
          | (original[original.length - 6] & 0xff) << 16 | (original[original.length - 5] & 0xff) << 24;
      int footerStart = original.length - 8 - footerLength;
      switch (random.nextInt(4)) {
        case 0 -> {
          int length = random.nextInt(original.length);
          mutated = Arrays.copyOf(original, length);
          what = "truncated to " + length;
        }
        case 1 -> {
          // the footer length itself, the PAR1 magic, or the bytes just before them
          mutated = original.clone();
          int at = original.length - 1 - random.nextInt(8);
          mutated[at] ^= (byte) (1 << random.nextInt(8));
          what = "bit flipped at " + at + " (footer length or magic)";
        }
        default -> {
          mutated = original.clone();
          StringBuilder sb = new StringBuilder("bits flipped in the footer at");
          for (int f = 0; f < 1 + random.nextInt(3); f++) {
            int at = footerStart + random.nextInt(footerLength);
            mutated[at] ^= (byte) (1 << random.nextInt(8));
            sb.append(' ').append(at);
          }
          what = sb.toString();
        }
      }
      String name = "m" + i + "-" + source.getFileName();
      Path file = root.resolve("fuzz").resolve(name);
      Files.write(file, mutated);
      long start = System.nanoTime();
      Throwable failure = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        try {
          List<Row> rows = spark.read().format("gpudirect").load(fixture.uri("fuzz/" + name)).collectAsList();
          // It read: Spark's own reader on the same bytes is the reference, and must agree.
          assertEquals(spark.read().parquet(file.toString()).collectAsList(), rows,
              name + " (" + what + "): rows differ from Spark's reader");
          return null;
        } catch (Exception e) {
          return e;
        }
      }, () -> name + " (" + what + ") took too long");
      slowestMillis = Math.max(slowestMillis, (System.nanoTime() - start) / 1_000_000);
      if (failure == null) {
        read++;
      } else {
        failed++;
        String messages = messages(failure);
        assertTrue(messages.contains(name), name + " (" + what + "): the error must name the file: " + messages);
        assertFalse(messages.contains("OutOfMemoryError"), name + " (" + what + "): " + messages);
      }
      assertEquals(intactRows, spark.read().format("gpudirect").load(fixture.uri("intact.parquet")).count(),
          "the server must still serve after " + name);
    }
    System.out.printf("ParquetFooterFuzzIT: %d inputs: %d failed naming the file, %d read as Spark reads them;"
        + " slowest %d ms%n", INPUTS, failed, read, slowestMillis);
    assertEquals(INPUTS, failed + read);
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" | ");
    }
    return sb.toString();
  }
}
