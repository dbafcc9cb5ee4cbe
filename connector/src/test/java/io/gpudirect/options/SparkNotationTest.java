package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpudirect.SparkNotation;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.ToLongFunction;
import org.apache.spark.network.util.JavaUtils;
import org.junit.jupiter.api.Test;

/** Sizes and durations read as Spark's own parser reads them, Spark being the reference. */
class SparkNotationTest {
  private static final List<String> WRITTEN = List.of("0", "1", "64m", "64M", " 1g ", "1gb",
      "512k", "512kb", "3t", "2p", "2pb", "100b", "9223372036854775807", "8796093022208m",
      "8796093022207m", "8191p", "8192p", "1.5g", "0.5", "1x", "", "m", "-1", "-1m", "30s",
      "500ms", "2min", "2m", "250us", "1h", "7d", "-5s", "10 s", "s", "1e3", "1d2",
      "106751991167300d", "106751991167301d", "9223372036854775808", "1ns", "+1");

  @Test
  void sizesAreReadAsSparkReadsThem() {
    for (String s : inputs()) {
      same(s, JavaUtils::byteStringAsBytes, SparkNotation::bytes);
    }
  }

  @Test
  void durationsAreReadAsSparkReadsThem() {
    for (String s : inputs()) {
      same(s, JavaUtils::timeStringAsMs, SparkNotation::millis);
    }
  }

  @Test
  void aMistakeSaysWhatWasWrittenAndWhatIsMeant() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SparkNotation.bytes("64x"));
    assertEquals("Invalid suffix: \"x\" in \"64x\"; a size is bytes (b), kibibytes (k), mebibytes"
        + " (m), gibibytes (g), tebibytes (t) or pebibytes (p), e.g. 50b, 100k or 250m",
        e.getMessage());
  }

  private static List<String> inputs() {
    List<String> all = new ArrayList<>(WRITTEN);
    Random random = new Random(42);
    String alphabet = "0123456789.-kmgtpbsuhdinKMGB ";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder b = new StringBuilder();
      for (int n = random.nextInt(8); n >= 0; n--) {
        b.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      all.add(b.toString());
    }
    return all;
  }

  private static void same(String s, ToLongFunction<String> spark, ToLongFunction<String> ours) {
    Long expected;
    try {
      expected = spark.applyAsLong(s);
    } catch (RuntimeException e) {
      expected = null;
    }
    if (expected == null) {
      assertThrows(IllegalArgumentException.class, () -> ours.applyAsLong(s),
          () -> "Spark refuses \"" + s + "\"");
    } else {
      assertEquals(expected, ours.applyAsLong(s), () -> "\"" + s + "\"");
    }
  }
}
