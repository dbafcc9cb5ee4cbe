package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.Utils;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import scala.Option;
import scala.Tuple2;
import scala.collection.JavaConverters;

/** The manager's start on its own: what it refuses, the application's secret, where map statuses say its server is. */
class GpuDirectShuffleManagerTest {
  @ParameterizedTest
  @ValueSource(strings = {"spark.shuffle.service.enabled", "spark.shuffle.push.enabled", "spark.network.crypto.enabled"})
  void refusesAtStartASettingItCannotHonourNamingIt(String setting) {
    SparkConf conf = new SparkConf(false).set(setting, "true");
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(conf, true));
    assertTrue(e.getMessage().contains(setting), e.getMessage());
    assertTrue(e.getMessage().contains("GpuDirectShuffleManager"), e.getMessage());
  }

  /**
   * Spark SQL decides whether to copy every row before a shuffle write by whether the manager is
   * a {@code SortShuffleManager} ({@code ShuffleExchangeExec.needToCopyObjectsBeforeShuffle}):
   * ours, whose writers are Spark's sort-based ones, must be one, or every shuffled row is copied
   * once more (718 MB on a 771 MiB repartition, 7% of its map phase, when it held one instead).
   */
  @Test
  void isSparksSortShuffleManagerSoThatSparkSqlDoesNotCopyRowsBeforeWriting() {
    org.apache.spark.shuffle.ShuffleManager manager = new GpuDirectShuffleManager(new SparkConf(false), false);
    try {
      org.junit.jupiter.api.Assertions.assertInstanceOf(org.apache.spark.shuffle.sort.SortShuffleManager.class,
          manager);
    } finally {
      manager.stop();
    }
  }

  @Test
  void theDriverMakesEachApplicationASecretThatSparkRedacts() {
    SparkConf one = new SparkConf(false);
    new GpuDirectShuffleManager(one, true).stop();
    SparkConf two = new SparkConf(false);
    new GpuDirectShuffleManager(two, true).stop();
    String secret = one.get(ShuffleSecret.SETTING);
    assertTrue(secret.matches("[0-9a-f]{64}"), "32 random bytes in hex: " + secret);
    assertFalse(secret.equals(two.get(ShuffleSecret.SETTING)), "another application's secret");
    assertArrayEquals(secret.getBytes(StandardCharsets.UTF_8), ShuffleSecret.of(one, null));

    List<Tuple2<String, String>> shown = JavaConverters.seqAsJavaList(Utils.redact(one,
        JavaConverters.asScalaBuffer(Arrays.asList(one.getAll())).toSeq()));
    assertTrue(shown.stream().anyMatch(kv -> kv._1().equals(ShuffleSecret.SETTING)));
    assertTrue(shown.stream().noneMatch(kv -> kv._2().contains(secret)), "redacted: " + shown);
  }

  @Test
  void anExecutorsManagerMakesNoSecret() {
    SparkConf conf = new SparkConf(false);
    new GpuDirectShuffleManager(conf, false).stop();
    assertFalse(conf.contains(ShuffleSecret.SETTING));
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> ShuffleSecret.of(conf, null));
    assertTrue(e.getMessage().contains(ShuffleSecret.SETTING) && e.getMessage().contains("driver"), e.getMessage());
  }

  @Test
  void withSparkAuthenticationTheSecretIsDerivedFromSparksAndIsNotIt() {
    byte[] a = derived("spark's-own-secret-of-application-a");
    assertEquals(32, a.length);
    assertArrayEquals(a, derived("spark's-own-secret-of-application-a"));
    assertFalse(Arrays.equals(a, derived("spark's-own-secret-of-application-b")));
    assertFalse(new String(a, StandardCharsets.ISO_8859_1).contains("spark's-own"));
    SparkConf conf = new SparkConf(false).set("spark.authenticate", "true");
    new GpuDirectShuffleManager(conf, true).stop();
    assertFalse(conf.contains(ShuffleSecret.SETTING), "no secret of its own beside Spark's");
  }

  private static byte[] derived(String sparkSecret) {
    SparkConf conf = new SparkConf(false).set("spark.authenticate", "true").set("spark.authenticate.secret", sparkSecret);
    return ShuffleSecret.of(conf, new SecurityManager(conf, Option.empty(),
        org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE_EXECUTOR()));
  }

  @Test
  void aMapStatusLocationNamesTheServerAndKeepsItsIds() {
    BlockManagerId spark = BlockManagerId.apply("3", "10.0.0.7", 40123, Option.empty());
    BlockManagerId located = ServerLocation.withPort(spark, 45678);
    assertEquals(List.of("3", "10.0.0.7", 40123), List.of(located.executorId(), located.host(), located.port()));
    assertEquals(45678, ServerLocation.of(located).getPort());
    assertEquals("10.0.0.7", ServerLocation.of(located).getHostString());
    assertNull(ServerLocation.of(spark), "a location from Spark's own shuffle names no server");

    BlockManagerId racked = BlockManagerId.apply("3", "10.0.0.7", 40123, Option.apply("/rack-2"));
    BlockManagerId both = ServerLocation.withPort(racked, 45678);
    assertTrue(both.topologyInfo().get().startsWith("/rack-2"), both.toString());
    assertEquals(45678, ServerLocation.of(both).getPort());
  }
}
