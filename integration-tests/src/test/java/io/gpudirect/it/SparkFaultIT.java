package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults between Spark's reads and a real server, injected by a {@link LoopbackCutter} that
 * the scan reaches through its URI: a connection reset mid-block, flipped payload bits, a
 * stall and a drip, and a server restart during a scan. Each case ends in exactly the rows
 * Spark's own Parquet reader gives on the local files (after retries), or in a clear failure
 * within the configured {@code requestTimeout}; never in other rows, never in a hang. Each case
 * also checks that its fault really fired.
 */
class SparkFaultIT {
  @TempDir
  static Path root;
  private static BlockServer server;
  private static List<String> expected;
  private LoopbackCutter proxy;

  @BeforeAll
  static void data() {
    SparkSession spark = LocalSpark.get();
    // About 6 MB in 2 files: every scan spans many pipelined chunk reads on each connection.
    spark.range(0, 300_000).selectExpr("id", "id * 7 % 1000 AS k", "sha2(CAST(id AS STRING), 256) AS h")
        .repartition(2).write().parquet(root.resolve("data").toString());
    expected = sorted(spark.read().parquet(root.resolve("data").toString()).collectAsList());
    server = start(0);
  }

  @AfterAll
  static void stop() {
    RemoteStores.closeAll();
    server.close();
  }

  @AfterEach
  void closeProxy(org.junit.jupiter.api.TestInfo test) throws Exception {
    // The scan's connections go through this proxy; later cases must not reuse them.
    RemoteStores.closeAll();
    if (proxy != null) {
      System.out.printf("SparkFaultIT %s: %d faults injected over %d connections%n", test.getDisplayName(),
          proxy.faultsInjected(), proxy.connections());
      proxy.close();
    }
  }

  private static BlockServer start(int port) {
    return BlockServer.builder().root(root).port(port).shutdownGracePeriod(Duration.ofMillis(200)).build().start();
  }

  private DataFrameReader reader(String requestTimeout) {
    return LocalSpark.get().read().format("gpudirect")
        .option("streams", "2")
        .option("chunkSize", "256k")
        .option("requestTimeout", requestTimeout)
        .option("maxRetries", "3")
        .option("retryBackoff", "20ms");
  }

  private String uri() {
    return "gpudirect://127.0.0.1:" + proxy.port() + "/data";
  }

  private List<String> scan(String requestTimeout) {
    return assertTimeoutPreemptively(Duration.ofSeconds(60),
        () -> sorted(reader(requestTimeout).load(uri()).collectAsList()), "the scan hung");
  }

  @Test
  void connectionResetMidBlockIsRetried() throws Exception {
    // The first two connections (the scan's two streams) are cut 300 KB into their replies.
    proxy = new LoopbackCutter(server.port(), 300_000, 2);
    assertEquals(expected, scan("10s"));
    assertTrue(proxy.faultsInjected() >= 1, "no connection was cut");
    assertTrue(proxy.connections() > 2, "no read was retried on a new connection");
  }

  @Test
  void flippedPayloadBitsAreRetried() throws Exception {
    proxy = new LoopbackCutter(server.port(), 200_000, 2).corruptInsteadOfClose(150_000);
    assertEquals(expected, scan("10s"));
    assertTrue(proxy.faultsInjected() >= 1, "no byte was flipped");
  }

  @Test
  void corruptionOnEveryAttemptFailsClearly() throws Exception {
    // Every connection, retries included, has a byte flipped every 4 KB past its first 4 KB.
    proxy = new LoopbackCutter(server.port(), 4096, Integer.MAX_VALUE).corruptInsteadOfClose(4096);
    Exception e = assertThrows(Exception.class, () -> scan("10s"));
    String messages = messages(e);
    assertTrue(messages.contains("127.0.0.1:" + proxy.port()), "the error must name the server: " + messages);
    assertTrue(messages.contains("CRC32C") || messages.contains("Bad ") || messages.contains("rotocol"),
        "the error must say the data was corrupt: " + messages);
    assertTrue(proxy.faultsInjected() >= 4, "faults: " + proxy.faultsInjected());
  }

  @Test
  void stallFailsWithinTheRequestTimeout() throws Exception {
    proxy = new LoopbackCutter(server.port(), 300_000, Integer.MAX_VALUE).stallInsteadOfClose();
    long start = System.nanoTime();
    Exception e = assertThrows(Exception.class, () -> scan("2s"));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(messages(e).contains("timed out") || messages(e).contains("no answer within"),
        "the error must say the read timed out: " + messages(e));
    // The first read to time out fails the scan; chunks of it already in flight end within
    // their own timeout and are not retried. At most two timeouts, plus Spark's overhead.
    assertTrue(millis < 8000, "took " + millis + " ms with requestTimeout 2s");
    assertTrue(proxy.faultsInjected() >= 1, "nothing stalled");
  }

  @Test
  void dripFailsWithinTheRequestTimeout() throws Exception {
    // Past 300 KB, one byte every 10 ms: the connection is alive but far too slow.
    proxy = new LoopbackCutter(server.port(), 300_000, Integer.MAX_VALUE).dripInsteadOfClose(10);
    long start = System.nanoTime();
    Exception e = assertThrows(Exception.class, () -> scan("2s"));
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(messages(e).contains("timed out") || messages(e).contains("no answer within"),
        "the error must say the read timed out: " + messages(e));
    assertTrue(millis < 8000, "took " + millis + " ms with requestTimeout 2s");
    assertTrue(proxy.faultsInjected() >= 1, "nothing dripped");
  }

  @Test
  void serverRestartDuringScanIsRetried() throws Exception {
    // The scan's first connections stall mid-block; the server then restarts on a new port
    // and the stalled connections drop, as a restart drops them.
    proxy = new LoopbackCutter(server.port(), 300_000, 2).stallInsteadOfClose();
    CompletableFuture<List<String>> scan = CompletableFuture.supplyAsync(() -> scan("30s"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (proxy.faultsInjected() == 0 && System.nanoTime() < deadline && !scan.isDone()) {
      Thread.sleep(10);
    }
    assertTrue(proxy.faultsInjected() >= 1, "the scan never reached the middle of a block");
    server.close();
    server = start(0);
    proxy.retarget(server.port());
    proxy.resetAll();
    assertEquals(expected, scan.get(60, TimeUnit.SECONDS));
  }

  private static List<String> sorted(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(r.toString());
    }
    out.sort(Comparator.naturalOrder());
    return out;
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" | ");
    }
    return sb.toString();
  }
}
