package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.Rmm;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import io.gpudirect.spark.RapidsJar;
import io.gpudirect.testing.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.types.AtomicType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import scala.collection.JavaConverters;

/**
 * Issue 15: with the RAPIDS Accelerator and {@link GpuDirectRapidsExtensions}, gpudirect's
 * device batches go straight into the plugin's GPU operators. For every file of
 * testdata/parquet and testdata/arrow, a filter with projection, an aggregate, a join of two
 * gpudirect tables and a sort:
 * <ul>
 *   <li>give exactly the rows Spark's CPU reading of the same local files gives (for Arrow,
 *       which Spark cannot read, gpudirect's host reader with the plugin off);</li>
 *   <li>where the plugin runs the query on the GPU, every gpudirect scan is the device scan,
 *       and its parent is a GPU operator: no host-to-GPU transition, ColumnarToRow or
 *       RowToColumnar between them; where the plugin's own reader puts a Parquet file on the
 *       GPU, ours must be on it too;</li>
 *   <li>the device scan reports the bytes it fetched (issue 15, item 4);</li>
 *   <li>no RMM byte, device charge or pinned chunk is left after each.</li>
 * </ul>
 *
 * <p>Needs a GPU and the rapids-4-spark 24.12 jar in place of the cuDF jar; staged by
 * dev/gpu-lab-rapids. Skipped otherwise.
 */
@GpuTest(cudf = false)
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class RapidsPassThroughGpuTest {
  private static final Set<String> PASSED_THROUGH = ConcurrentHashMap.newKeySet();

  private static SparkSession spark;
  private static BlockServer server;
  private static String base;
  private long rmmBefore;

  @BeforeAll
  static void start() {
    RapidsJar.assumeOnClassPath();
    server = BlockServer.builder().root(TestData.root()).bindAddress("127.0.0.1").port(0).build().start();
    base = "gpudirect://127.0.0.1:" + server.port() + "/";
    spark = LocalSessions.builder("gpudirect-rapids-pass-through", 4)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "false")
        // A broadcast keeps its device batch cached on executors; the leak check wants none.
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.plugins", RapidsJar.PLUGIN)
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName())
        .config("spark.rapids.sql.enabled", "true")
        .config("spark.rapids.memory.gpu.allocFraction", "0.3")
        .config("spark.rapids.memory.gpu.minAllocFraction", "0")
        .config("spark.rapids.memory.pinnedPool.size", "0")
        .config("spark.rapids.sql.explain", "NOT_ON_GPU")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  static Stream<String> files() throws Exception {
    List<String> all = new ArrayList<>();
    for (String dir : new String[] {"parquet", "arrow"}) {
      try (Stream<Path> s = Files.list(TestData.dir(dir))) {
        s.map(p -> dir + "/" + p.getFileName())
            .filter(n -> n.endsWith(".parquet") || n.endsWith(".arrow_file") || n.endsWith(".stream"))
            .sorted().forEach(all::add);
      }
    }
    return all.stream();
  }

  @org.junit.jupiter.api.BeforeEach
  void countRmm() {
    if (spark != null) {
      rmmBefore = Rmm.getTotalBytesAllocated();
    }
  }

  @AfterEach
  void nothingLeft() {
    if (spark == null) {
      return;
    }
    assertEquals(rmmBefore, Rmm.getTotalBytesAllocated(), "RMM bytes outstanding");
    GpuResources.open().forEach(gpu -> {
      assertEquals(0, gpu.pool().chunksInUse(), "pinned chunks outstanding");
      assertEquals(0, gpu.device().accounts().outstandingBytes(), "device bytes still charged");
    });
  }

  @ParameterizedTest
  @MethodSource("files")
  @org.junit.jupiter.api.Order(1)
  void queriesOnTheGpuGetSparksRowsWithoutACopy(String file) {
    boolean parquet = file.endsWith(".parquet");
    Dataset<Row> remote;
    Dataset<Row> remote2;
    Dataset<Row> reference;
    spark.conf().set("spark.rapids.sql.enabled", "false");
    try {
      remote = spark.read().format("gpudirect").load(base + file);
      remote2 = spark.read().format("gpudirect").load(base + file);
      reference = parquet ? spark.read().parquet(TestData.root().resolve(file).toString())
          : spark.read().format("gpudirect").option("output", "host").load(base + file);
    } catch (RuntimeException unreadable) {
      // Files Spark itself refuses (unsupported types) are MalformedIT's business, not this one's.
      return;
    }
    remote.createOrReplaceTempView("g");
    remote2.createOrReplaceTempView("g2");
    reference.createOrReplaceTempView("l");
    reference.createOrReplaceTempView("l2");
    StructField key = Arrays.stream(remote.schema().fields())
        .filter(f -> f.dataType() instanceof AtomicType && !(f.dataType() instanceof BinaryType))
        .findFirst().orElse(null);
    List<String> queries = new ArrayList<>();
    queries.add("SELECT * FROM %1$s");
    // A bare SELECT * has no GPU operator for the plugin to feed: the filter is the query
    // whose scan must be on the GPU wherever the plugin's own reader is.
    String filter = null;
    if (key != null) {
      String k = "`" + key.name() + "`";
      filter = "SELECT " + k + ", * FROM %1$s WHERE " + k + " IS NOT NULL";
      queries.add(filter);
      queries.add("SELECT " + k + ", count(*) AS n FROM %1$s GROUP BY " + k);
      queries.add("SELECT a." + k + ", count(*) AS n FROM %1$s a JOIN %2$s b ON a." + k + " = b." + k
          + " GROUP BY a." + k);
      queries.add("SELECT " + k + " FROM %1$s ORDER BY " + k + " NULLS FIRST");
    }
    boolean pluginReadsIt = parquet && pluginScansOnTheGpu(file);
    for (String q : queries) {
      String what = file + ": " + String.format(q, "g", "g2");
      List<Row> expected = reference(String.format(q, "l", "l2"), parquet);
      spark.conf().set("spark.rapids.sql.enabled", "true");
      Dataset<Row> df = spark.sql(String.format(q, "g", "g2"));
      if (expected == null) {
        if (!parquet) {
          // The host reader refuses the file (a value its type cannot hold): so must the device path.
          Exception e = assertThrows(Exception.class, df::collectAsList, what + ": read, where the host reader refuses it");
          assertTrue(String.valueOf(e.getMessage()).contains(file), what + ": the error names the file: " + e);
        }
        continue;
      }
      List<Row> actual = df.collectAsList();
      if (q.contains("ORDER BY")) {
        assertEquals(rendered(expected), rendered(actual), what);
      } else {
        assertEquals(sorted(expected), sorted(actual), what);
      }
      boolean device = assertScansFeedTheGpu(df.queryExecution().executedPlan(), what);
      if (device) {
        PASSED_THROUGH.add(file);
      }
      if (pluginReadsIt && q.equals(filter) && PassThroughRule.layoutRefusal(remote.schema()) == null) {
        assertTrue(device, what + ": the plugin's reader puts this file on the GPU, but gpudirect's scan is not"
            + " the device scan:\n" + df.queryExecution().executedPlan());
      }
    }
    spark.conf().set("spark.rapids.sql.enabled", "true");
  }

  /**
   * Spark's CPU rows for {@code query}, or null when Spark refuses the file. Parquet is read by
   * Spark's vectorized reader and, where that refuses a file (binary-backed decimals), by its
   * row reader; Arrow by gpudirect's host reader.
   */
  private static List<Row> reference(String query, boolean parquet) {
    spark.conf().set("spark.rapids.sql.enabled", "false");
    try {
      return spark.sql(query).collectAsList();
    } catch (Exception vectorizedRefuses) {
      if (!parquet) {
        return null;
      }
    }
    spark.conf().set("spark.sql.parquet.enableVectorizedReader", "false");
    try {
      return spark.sql(query).collectAsList();
    } catch (Exception sparkRefuses) {
      return null;
    } finally {
      spark.conf().unset("spark.sql.parquet.enableVectorizedReader");
    }
  }

  /** Guards against a rule that never fires: then every file would look unsupported. */
  @Test
  @org.junit.jupiter.api.Order(2)
  void parquetAndArrowFilesPassedThrough() {
    assumeTrue(spark != null);
    assertTrue(PASSED_THROUGH.stream().anyMatch(f -> f.endsWith(".parquet")), "" + PASSED_THROUGH);
    assertTrue(PASSED_THROUGH.stream().anyMatch(f -> f.startsWith("arrow/")), "" + PASSED_THROUGH);
  }

  /**
   * A device scan's tasks report the bytes it fetched as Spark's input bytes, as the host scan's
   * do (ScanInputMetricsTest): a GPU decode fetches through its own source, not the Hadoop
   * streams that Spark's input metrics count, and at SF 30 showed "input 0 B" for 180 M rows.
   */
  @Test
  @org.junit.jupiter.api.Order(3)
  void theDeviceScansBytesAreSparksInputBytes() throws Exception {
    assumeTrue(spark != null);
    String file = PASSED_THROUGH.stream().filter(f -> f.endsWith(".parquet")).sorted().findFirst().orElseThrow();
    AtomicLong input = new AtomicLong();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          input.addAndGet(end.taskMetrics().inputMetrics().bytesRead());
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    try {
      Dataset<Row> remote = spark.read().format("gpudirect").load(base + file);
      remote.queryExecution().toRdd().count();
      spark.sparkContext().listenerBus().waitUntilEmpty();
      List<SparkPlan[]> scans = new ArrayList<>();
      collectGpuDirectScans(remote.queryExecution().executedPlan(), null, scans);
      long fetched = scans.stream().mapToLong(s -> s[1].metrics().get("bytesFetched").get().value()).sum();
      assertTrue(fetched > 0, file + ": the device scan fetched nothing");
      assertEquals(fetched, input.get(), file + ": Spark's input bytes against the scan's bytes fetched");
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
  }

  /**
   * Partition directories: a query that reads a partition column takes the plugin's copy (the
   * values are host constants), saying so; one that reads only the files' columns goes over on
   * the device. Both give Spark's CPU rows of the same local directories.
   */
  @Test
  @org.junit.jupiter.api.Order(3)
  void partitionDirectoriesGiveSparksRows(@org.junit.jupiter.api.io.TempDir Path dir) {
    assumeTrue(spark != null);
    spark.conf().set("spark.rapids.sql.enabled", "false");
    spark.sql("SELECT id, CAST(id % 3 AS INT) AS year, id * 2 AS v FROM range(0, 3000)")
        .write().partitionBy("year").parquet(dir.resolve("t").toString());
    try (BlockServer local = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0).build().start()) {
      spark.read().format("gpudirect").load("gpudirect://127.0.0.1:" + local.port() + "/t").createOrReplaceTempView("pg");
      spark.read().parquet(dir.resolve("t").toString()).createOrReplaceTempView("pl");
      for (String q : new String[] {"SELECT year, count(*), sum(v) FROM %s WHERE id > 10 GROUP BY year",
          "SELECT sum(v), count(*) FROM %s WHERE id > 10"}) {
        List<Row> expected = reference(String.format(q, "pl"), true);
        spark.conf().set("spark.rapids.sql.enabled", "true");
        Dataset<Row> df = spark.sql(String.format(q, "pg"));
        assertEquals(sorted(expected), sorted(df.collectAsList()), q);
        boolean device = assertScansFeedTheGpu(df.queryExecution().executedPlan(), q);
        boolean readsYear = q.startsWith("SELECT year");
        assertEquals(!readsYear, device, q + ":\n" + df.queryExecution().executedPlan());
        if (readsYear) {
          assertTrue(df.queryExecution().executedPlan().toString().contains("partition columns from directory names"),
              q + ":\n" + df.queryExecution().executedPlan());
        }
      }
      RemoteStores.closeAll();
    }
  }

  /** Whether the plugin, reading the local file with its own reader, plans a GPU scan. */
  private static boolean pluginScansOnTheGpu(String file) {
    spark.conf().set("spark.rapids.sql.enabled", "true");
    String plan = spark.read().parquet(TestData.root().resolve(file).toString())
        .queryExecution().executedPlan().toString();
    return plan.contains("GpuFileGpuScan") || plan.contains("GpuFileSourceScan") || plan.contains("GpuBatchScan");
  }

  /**
   * Checks every gpudirect scan of {@code plan}: never under one of the plugin's host-to-GPU
   * transitions, and a device scan only directly under a GPU operator, with bytes fetched in
   * its metrics. Returns whether there was a device scan.
   */
  private static boolean assertScansFeedTheGpu(SparkPlan plan, String what) {
    List<SparkPlan[]> scans = new ArrayList<>();
    collectGpuDirectScans(plan, null, scans);
    assertFalse(scans.isEmpty(), what + ": no gpudirect scan in\n" + plan);
    boolean device = false;
    for (SparkPlan[] pair : scans) {
      SparkPlan parent = pair[0];
      BatchScanExec scan = (BatchScanExec) pair[1];
      String parentName = parent == null ? "none" : parent.getClass().getName();
      // Left under the plugin's copy only where the scan says why (binary columns, say).
      assertFalse(parent != null && PassThroughRule.isTransition(parent) && !scan.scan().description().contains("note:"),
          what + ": the plugin's transition is still over gpudirect's scan, with no note why:\n" + plan);
      if (scan.scan().getClass().getName().equals("io.gpudirect.spark.DeviceScan")) {
        device = true;
        String simple = parentName.substring(parentName.lastIndexOf('.') + 1);
        assertTrue(simple.startsWith("Gpu") && !simple.contains("ToRow") && !simple.contains("RowTo"),
            what + ": the device scan feeds " + parentName + ", not a GPU operator:\n" + plan);
        // A scan whose row groups were all pruned at planning, or a file without record
        // batches, has nothing to fetch; one that produced rows must say what it fetched.
        long rows = scan.metrics().get("numOutputRows").get().value();
        assertTrue(rows == 0 || scan.metrics().get("bytesFetched").get().value() > 0,
            what + ": the device scan produced " + rows + " rows but reports no bytes fetched");
      }
    }
    return device;
  }

  private static void collectGpuDirectScans(SparkPlan p, SparkPlan parent, List<SparkPlan[]> into) {
    if (p instanceof BatchScanExec b && b.scan().getClass().getName().startsWith("io.gpudirect.spark.")) {
      into.add(new SparkPlan[] {parent, p});
    }
    for (SparkPlan c : JavaConverters.seqAsJavaList(p.children())) {
      collectGpuDirectScans(c, p, into);
    }
  }

  private static List<String> rendered(List<Row> rows) {
    List<String> s = new ArrayList<>();
    for (Row r : rows) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        Object v = r.get(i);
        b.append(v instanceof byte[] bytes ? Arrays.toString(bytes) : String.valueOf(v)).append('|');
      }
      s.add(b.toString());
    }
    return s;
  }

  private static List<String> sorted(List<Row> rows) {
    List<String> s = rendered(rows);
    s.sort(null);
    return s;
  }
}
