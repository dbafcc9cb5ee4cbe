package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Only the column chunks and row groups a query needs cross the wire, as the scan's metrics show. */
class PruningAndPushdownIT {
  @TempDir
  static Path tmp;
  private static ServerFixture fixture;
  private static long wideFileBytes;

  @BeforeAll
  static void start() throws Exception {
    SparkSession spark = LocalSpark.get();
    List<String> columns = new ArrayList<>();
    columns.add("id");
    for (int i = 0; i < 40; i++) {
      columns.add("rand(" + i + ") AS c" + i);
    }
    spark.range(0, 200_000, 1, 1).selectExpr(columns.toArray(new String[0]))
        .write().parquet(tmp.resolve("wide").toString());
    // Small row groups, sorted by id, so that statistics can rule most of them out.
    spark.range(0, 400_000, 1, 1).selectExpr("id", "id % 7 AS k", "cast(id AS string) AS s")
        .write().option("parquet.block.size", 256 * 1024).parquet(tmp.resolve("sorted").toString());
    try (Stream<Path> s = Files.walk(tmp.resolve("wide"))) {
      wideFileBytes = s.filter(p -> p.toString().endsWith(".parquet")).mapToLong(p -> p.toFile().length()).sum();
    }
    fixture = ServerFixture.serve(tmp);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void oneColumnOfAWideFileFetchesAFraction() {
    SparkSession spark = LocalSpark.get();
    Dataset<Row> one = spark.read().format("gpudirect").load(fixture.uri("wide")).select("c7");
    List<Row> rows = one.collectAsList();
    assertEquals(spark.read().parquet(tmp.resolve("wide").toString()).select("c7").collectAsList(), rows);
    long fetched = ScanMetricValues.of(one).get("bytesFetched");
    assertTrue(fetched > 0, "bytes were fetched");
    assertTrue(fetched < wideFileBytes / 10,
        "one of 41 columns fetched " + fetched + " bytes of a " + wideFileBytes + "-byte file");

    Dataset<Row> all = spark.read().format("gpudirect").load(fixture.uri("wide"));
    all.collectAsList();
    long fetchedAll = ScanMetricValues.of(all).get("bytesFetched");
    assertTrue(fetchedAll > wideFileBytes * 9 / 10, "a full read fetched " + fetchedAll + " of " + wideFileBytes);
  }

  @Test
  void readAheadGivesTheSameRowsAndFetchesNoMoreThanTheReaderAsks() throws Exception {
    SparkSession spark = LocalSpark.get();
    List<Row> expected = spark.read().parquet(tmp.resolve("sorted").toString()).select("s", "k").collectAsList();
    long before = fixture.server.stats().bytesSent();
    List<Row> direct = spark.read().format("gpudirect").option("readAhead", "0").load(fixture.uri("sorted"))
        .select("s", "k").collectAsList();
    long sentDirect = settledBytesSentSince(before);
    before = fixture.server.stats().bytesSent();
    Dataset<Row> ahead = spark.read().format("gpudirect").option("readAhead", "1m").load(fixture.uri("sorted"))
        .select("s", "k");
    List<Row> rows = ahead.collectAsList();
    long sentAhead = settledBytesSentSince(before);
    assertEquals(expected, direct);
    assertEquals(expected, rows);
    // Many row groups in one slice, each with its two chunks fetched ahead and nothing else.
    assertTrue(ScanMetricValues.of(ahead).get("rowGroupsPlanned") > 5);
    assertTrue(sentAhead > 0 && sentAhead <= sentDirect, "read-ahead sent " + sentAhead + " bytes, direct reads " + sentDirect);
    // With filters the reader may skip more row groups than the plan knew of: still the same rows.
    assertEquals(spark.read().parquet(tmp.resolve("sorted").toString()).where("k = 3 AND id > 123456").collectAsList(),
        spark.read().format("gpudirect").option("readAhead", "1m").load(fixture.uri("sorted"))
            .where("k = 3 AND id > 123456").collectAsList());
  }

  /** The server's bytes sent since {@code before}, once the count has stopped moving (at most 5 s). */
  private static long settledBytesSentSince(long before) throws InterruptedException {
    long deadline = System.nanoTime() + 5_000_000_000L;
    long last = -1;
    long now = fixture.server.stats().bytesSent();
    while (now != last && System.nanoTime() < deadline) {
      last = now;
      Thread.sleep(200);
      now = fixture.server.stats().bytesSent();
    }
    return now - before;
  }

  @Test
  void filtersSkipRowGroupsByStatistics() throws Exception {
    SparkSession spark = LocalSpark.get();
    Dataset<Row> filtered = spark.read().format("gpudirect").load(fixture.uri("sorted")).where("id < 1000");
    List<Row> rows = filtered.collectAsList();
    assertEquals(spark.read().parquet(tmp.resolve("sorted").toString()).where("id < 1000").collectAsList(), rows);
    assertEquals(1000, rows.size());
    Map<String, Long> metrics = ScanMetricValues.of(filtered);
    assertTrue(metrics.get("rowGroupsPlanned") > 1, "the file has several row groups: " + metrics);
    assertTrue(metrics.get("rowGroupsSkipped") >= metrics.get("rowGroupsPlanned") - 1,
        "all row groups but the first are skipped: " + metrics);
    Map<String, String> shown = ScanMetricValues.displayed(filtered);
    assertEquals("tcp", shown.get("transport"), "the SQL tab shows the transport: " + shown);
    assertTrue(shown.get("fetchThroughput").matches(".*B/s \\(median; .*"), "and the fetch throughput: " + shown);
    assertTrue(shown.get("bytesFetched").endsWith("B") && shown.containsKey("fetchTime"), shown.toString());
    assertEquals(String.valueOf(metrics.get("rowGroupsSkipped")), shown.get("rowGroupsSkipped"));
    String plan = filtered.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("PushedFilters: [IsNotNull(id), LessThan(id,1000)]"), plan);
    // No RDMA device on the build machines: neither UCX (over verbs) nor DiSNI; auto reads over
    // TCP and says why.
    assertTrue(plan.contains("transport=tcp (transport=auto chose TCP: ")
        && (plan.contains("no RDMA device") || plan.contains("libdisni not found")),
        "explain() names the transport and why: " + plan);
  }

  @Test
  void transportRdmaWithoutRdmaFailsSayingWhatIsMissingAndHowToInstallIt() {
    SparkSession spark = LocalSpark.get();
    Throwable e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> spark.read()
        .format("gpudirect").option("transport", "rdma").load(fixture.uri("sorted")).collectAsList());
    StringBuilder messages = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    String all = messages.toString();
    if (io.gpudirect.verbs.ucx.UcxLibrary.unavailableReason() == null) {
      // UCX runs here (over TCP), so the client can do its part: the server serves no RDMA.
      assertTrue(all.contains("does not serve RDMA") && all.contains("--rdma on"), all);
      return;
    }
    assertTrue(all.contains("transport=rdma requested but RDMA is not available"), all);
    for (String needed : new String[] {"rdma-core", "libdisni", "nvidia-peermem"}) {
      assertTrue(all.contains(needed), "says to install " + needed + ": " + all);
    }
  }
}
