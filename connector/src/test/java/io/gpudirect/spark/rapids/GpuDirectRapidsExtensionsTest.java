package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import io.gpudirect.testing.TestData;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.collection.JavaConverters;

/**
 * Without the RAPIDS Accelerator, a session with {@link GpuDirectRapidsExtensions} configured
 * reads through gpudirect exactly as one without it: the rule is registered, finds none of the
 * plugin's transitions, and leaves every plan as the planner made it (the very same objects),
 * with no note in explain(); results equal Spark's reading of the local files.
 */
class GpuDirectRapidsExtensionsTest {
  private static final String PARQUET = "parquet/alltypes_plain.parquet";
  private static final String ARROW = "arrow/generated_primitive.arrow_file";

  private static SparkSession spark;
  private static BlockServer server;

  @BeforeAll
  static void start() {
    server = BlockServer.builder().root(TestData.root()).bindAddress("127.0.0.1").port(0).build().start();
    spark = LocalSessions.builder("gpudirect-rapids-extension", 2)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName())
        .getOrCreate();
    String base = "gpudirect://127.0.0.1:" + server.port() + "/";
    spark.read().format("gpudirect").load(base + PARQUET).createOrReplaceTempView("g");
    spark.read().parquet(TestData.root().resolve(PARQUET).toString()).createOrReplaceTempView("l");
    spark.read().format("gpudirect").load(base + ARROW).createOrReplaceTempView("ga");
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void theRuleIsRegisteredInTheSession() {
    List<ColumnarRule> rules = JavaConverters.seqAsJavaList(spark.sessionState().columnarRules());
    assertTrue(rules.stream().anyMatch(r -> r instanceof GpuDirectRapidsExtensions.PassThroughColumnarRule),
        "columnar rules: " + rules);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT id, int_col * 2 AS twice, string_col FROM %s WHERE bool_col",
      "SELECT int_col, count(*) AS n, sum(bigint_col) AS s, max(double_col) AS m FROM %s GROUP BY int_col",
      "SELECT a.id, b.double_col, b.date_string_col FROM %1$s a JOIN %1$s b ON a.id = b.id + 1",
      "SELECT id, float_col, timestamp_col FROM %s ORDER BY float_col DESC, id"})
  void parquetPlansAndResultsAreUnchanged(String query) {
    Dataset<Row> remote = spark.sql(String.format(query, "g"));
    List<Row> expected = spark.sql(String.format(query, "l")).collectAsList();
    List<Row> actual = remote.collectAsList();
    if (query.contains("ORDER BY")) {
      assertEquals(expected, actual);
    } else {
      assertEquals(sorted(expected), sorted(actual));
    }
    assertUntouched(remote);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT * FROM %s WHERE int32_nullable IS NOT NULL",
      "SELECT count(*), count(int64_nullable), max(utf8_nonnullable) FROM %s",
      "SELECT a.int32_nonnullable, b.utf8_nullable FROM %1$s a JOIN %1$s b ON a.int32_nonnullable = b.int32_nonnullable",
      "SELECT int32_nonnullable, utf8_nonnullable FROM %s ORDER BY int32_nonnullable DESC, utf8_nonnullable"})
  void arrowPlansAreUnchanged(String query) {
    Dataset<Row> remote = spark.sql(String.format(query, "ga"));
    assertFalse(remote.collectAsList().isEmpty());
    assertUntouched(remote);
  }

  /** The executed plan scans with our own scan, and the rule, applied again, returns it as is. */
  private static void assertUntouched(Dataset<Row> df) {
    SparkPlan plan = df.queryExecution().executedPlan();
    List<BatchScanExec> scans = new ArrayList<>();
    collectScans(plan, scans);
    assertFalse(scans.isEmpty(), plan.toString());
    for (BatchScanExec s : scans) {
      assertEquals("io.gpudirect.spark.GpuDirectScan", s.scan().getClass().getName(), plan.toString());
      assertFalse(s.scan().description().contains("note:"), s.scan().description());
    }
    assertSame(plan, new PassThroughRule(spark).apply(plan));
  }

  private static void collectScans(SparkPlan p, List<BatchScanExec> into) {
    if (p instanceof BatchScanExec b) {
      into.add(b);
    }
    if (p instanceof org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec a) {
      collectScans(a.executedPlan(), into);
    }
    if (p instanceof org.apache.spark.sql.execution.adaptive.QueryStageExec q) {
      collectScans(q.plan(), into);
    }
    for (SparkPlan c : JavaConverters.seqAsJavaList(p.children())) {
      collectScans(c, into);
    }
  }

  /** Rows as text, binary values by content, in a stable order. */
  private static List<String> sorted(List<Row> rows) {
    List<String> s = new ArrayList<>();
    for (Row r : rows) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        Object v = r.get(i);
        b.append(v instanceof byte[] bytes ? java.util.Arrays.toString(bytes) : String.valueOf(v)).append('|');
      }
      s.add(b.toString());
    }
    s.sort(null);
    return s;
  }
}
