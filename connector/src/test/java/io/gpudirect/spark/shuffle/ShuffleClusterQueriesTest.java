package io.gpudirect.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.spark_partition_id;
import static org.apache.spark.sql.functions.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.spark.LocalSessions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Shuffle-heavy queries on a two-executor cluster with gpudirect's shuffle manager give the rows
 * Spark's own shuffle gives: aggregations, a join with broadcasts off, a global sort, a hash
 * repartition, a skewed key (AQE's skew-join split on), partitions left empty, RDD shuffles with
 * map-side combine and key ordering; with AQE on (coalesced and batch-fetched reads) and off.
 * Most blocks cross between the executors, which only gpudirect's servers serve, with the secret
 * the driver made for the application.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ShuffleClusterQueriesTest {
  @TempDir Path tmp;

  /** Each query, by name, as rows in a comparable order. */
  static Map<String, List<String>> run(SparkSession spark) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (boolean aqe : new boolean[] {false, true}) {
      spark.conf().set("spark.sql.adaptive.enabled", aqe);
      spark.conf().set("spark.sql.adaptive.skewJoin.enabled", aqe);
      spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "8k");
      spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "8k");
      spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2");
      Dataset<Row> facts = spark.range(0, 20_000, 1, 4).selectExpr("id", "id % 500 as k",
          "CASE WHEN id % 10 < 7 THEN 7 ELSE id % 97 END as skew", "cast(id * 31 % 1009 as string) as s");
      Dataset<Row> dims = spark.range(0, 500, 1, 3).selectExpr("id as k", "concat('name-', id) as name");
      Dataset<Row> skewDims = spark.range(0, 97, 1, 2).selectExpr("id as skew", "id * 3 as weight");
      Map<String, Supplier<Dataset<Row>>> queries = new LinkedHashMap<>();
      queries.put("groupBy", () -> facts.groupBy("k").agg(count("*"), sum("id"), max("s")));
      queries.put("join", () -> facts.join(dims, "k").groupBy("name").agg(sum("id"), count("*")));
      queries.put("skewJoin", () -> facts.join(skewDims, "skew").groupBy("skew").agg(sum("weight"), count("*")));
      queries.put("skewGroupBy", () -> facts.groupBy("skew").agg(count("*"), sum("id")));
      queries.put("emptyPartitions", () -> facts.filter("k < 3").repartition(40, col("k")).groupBy("k").count());
      queries.put("repartition", () -> facts.repartition(7, col("k")).groupBy(spark_partition_id().as("p"))
          .agg(count("*"), sum("id")));
      queries.put("sort", () -> facts.filter("id % 7 = 0").orderBy(col("s").desc(), col("id")).select("s", "id"));
      queries.forEach((name, q) -> {
        // With AQE off, the plain reads once; AQE's coalesced, batched and skew-split reads for all.
        if (!aqe && !List.of("groupBy", "join").contains(name)) {
          return;
        }
        List<String> rows = new ArrayList<>(q.get().collectAsList().stream().map(Row::toString).toList());
        if (!name.equals("sort")) {
          rows.sort(null);
        }
        out.put(name + (aqe ? " (AQE)" : ""), rows);
      });
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaPairRDD<Integer, Long> pairs = jsc.parallelize(java.util.stream.IntStream.range(0, 20_000).boxed().toList(), 5)
        .mapToPair(i -> new Tuple2<>(i % 777, (long) i));
    out.put("reduceByKey", pairs.reduceByKey(Long::sum, 6).collect().stream().map(Tuple2::toString).sorted().toList());
    out.put("sortByKey", pairs.reduceByKey(Math::max, 4).sortByKey(false, 3).collect().stream()
        .map(Tuple2::toString).toList());
    out.put("groupByKey", pairs.groupByKey(5).mapValues(vs -> {
      long n = 0;
      for (long ignored : vs) {
        n++;
      }
      return n;
    }).collect().stream().map(Tuple2::toString).sorted().toList());
    return out;
  }

  /** The rows of every query with Spark's own shuffle, on a local Spark. */
  static Map<String, List<String>> rowsOfSparksOwnShuffle() {
    SparkSession local = LocalSessions.builder("spark-shuffle-reference", 2)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .getOrCreate();
    try {
      return run(local);
    } finally {
      local.stop();
    }
  }

  /** Every query on {@code cluster} gives {@code expected}'s rows, with no fetch failed and blocks fetched remotely. */
  static void assertSameRows(Map<String, List<String>> expected, ShuffleCluster cluster) throws Exception {
    Map<String, List<String>> actual = run(cluster.spark);
    cluster.settled();
    assertEquals(expected.keySet(), actual.keySet());
    expected.forEach((name, rows) -> {
      assertTrue(!rows.isEmpty(), name + " has rows");
      assertEquals(rows, actual.get(name), name);
    });
    assertEquals(0, cluster.fetchFailures.get(), "fetch failures");
    assertTrue(cluster.remoteBlocksFetched.get() > 0, "blocks fetched from the other executor: "
        + cluster.remoteBlocksFetched.get() + " (local: " + cluster.localBlocksFetched.get() + ")");
  }

  /**
   * Two applications on one cluster: Spark's own writers, then the map outputs written on the
   * executors' writer threads ({@link ThreadedBypassWriter}), whose shuffles here are the SQL
   * exchanges (Spark's row serializer) and groupByKey's (Java serialization of pairs); reduceByKey's
   * map-side combine and sortByKey's keep Spark's writers.
   */
  @Test
  void queriesGiveTheRowsOfSparksOwnShuffle() throws Exception {
    Map<String, List<String>> expected = rowsOfSparksOwnShuffle();
    try (StandaloneCluster on = ShuffleCluster.twoWorkers(tmp).start()) {
      try (ShuffleCluster cluster = ShuffleCluster.on(on, "gpudirect-shuffle-queries", Map.of())) {
        assertSameRows(expected, cluster);
        assertEquals(Set.of("tcp"), cluster.bytesFetchedByTransport().keySet(), "transport=auto, no RDMA here");
      }
      try (ShuffleCluster cluster = ShuffleCluster.on(on, "gpudirect-shuffle-threaded-writer",
          Map.of(ExecutorShuffle.WRITE_THREADS, "2"))) {
        assertSameRows(expected, cluster);
      }
      assertTrue(on.executorLogs().contains("writes map tasks' partitions on 2 threads"), "the threaded writer ran");
    }
  }
}
