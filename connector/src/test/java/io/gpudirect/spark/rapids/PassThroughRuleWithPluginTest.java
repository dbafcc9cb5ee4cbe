package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import io.gpudirect.testing.TestData;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.JavaConverters;

/**
 * {@link PassThroughRule} against the RAPIDS Accelerator's real plan classes, which need no
 * GPU to be built: the transitions the plugin puts over a scan it does not know are made here
 * as its GpuTransitionOverrides makes them, and the rule must turn each into the plugin's
 * coalescing over gpudirect's device scan, with the transition's goal; leave those it must
 * leave, saying why; and find every class and method it reaches by reflection. Runs wherever
 * the plugin's jar is on the class path (the GPU lab's stage); skipped elsewhere.
 */
class PassThroughRuleWithPluginTest {
  private static final String FILE = "parquet/alltypes_plain.parquet";
  private static SparkSession spark;
  private static BlockServer server;
  private static String uri;

  @BeforeAll
  static void start() {
    assumeTrue(RapidsPlugin.version().isPresent(), "skipped: needs the RAPIDS Accelerator jar on the class path");
    server = BlockServer.builder().root(TestData.root()).bindAddress("127.0.0.1").port(0).build().start();
    uri = "gpudirect://127.0.0.1:" + server.port() + "/" + FILE;
    spark = LocalSessions.builder("gpudirect-pass-through-rule", 1)
        // The plugin's plan classes without its SQL plugin: its shim for the Spark it was built
        // for, whichever 3.5 runs the test (the classes built here touch nothing that differs).
        .config("spark.rapids.shims-provider-override",
            "com.nvidia.spark.rapids.shims.spark353.SparkShimServiceProvider")
        .config("spark.sql.extensions", GpuDirectRapidsExtensions.class.getName())
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void theHostToGpuCopyOverOurScanBecomesTheDeviceScan() throws Exception {
    BatchScanExec scan = scanOf(uri, "auto", "id", "int_col", "double_col");
    Object goal = targetSize(1 << 20);
    SparkPlan after = new PassThroughRule(spark).apply(transition(RapidsPlugin.HOST_TO_GPU, scan, goal));
    assertDeviceScanUnderCoalesce(after, goal);
    assertSame(after, new PassThroughRule(spark).apply(after), "the rule changes its own output no further");
  }

  /** What Spark compares to reuse an exchange: TPC-H's q18 reads lineitem's same columns twice. */
  @Test
  void theDeviceScansOfOneReadPlannedTwiceAreEqual() throws Exception {
    Dataset<Row> table = spark.read().format("gpudirect").load(uri);
    BatchScanExec a = find(table.select("id", "int_col").queryExecution().executedPlan());
    BatchScanExec b = find(table.select("id", "int_col").queryExecution().executedPlan());
    assertNotSame(a.scan(), b.scan());
    Object goal = targetSize(1 << 20);
    SparkPlan onA = new PassThroughRule(spark).apply(transition(RapidsPlugin.HOST_TO_GPU, a, goal));
    SparkPlan onB = new PassThroughRule(spark).apply(transition(RapidsPlugin.HOST_TO_GPU, b, goal));
    assertDeviceScanUnderCoalesce(onA, goal);
    assertEquals(onA.canonicalized(), onB.canonicalized());
    assertEquals(onA.canonicalized().hashCode(), onB.canonicalized().hashCode());
  }

  @Test
  void theRowTransitionOverAColumnarToRowBecomesTheDeviceScan() throws Exception {
    BatchScanExec scan = scanOf(uri, "gpu", "id", "int_col");
    Object goal = targetSize(1 << 20);
    SparkPlan after = new PassThroughRule(spark).apply(
        transition(RapidsPlugin.ROW_TO_GPU, new ColumnarToRowExec(scan), goal));
    assertDeviceScanUnderCoalesce(after, goal);
  }

  /** The plugin's own copy has no BinaryType at all: the device scan is the only way such a column gets on. */
  @Test
  void aBinaryColumnIsHandedOverOnTheDeviceToo() throws Exception {
    BatchScanExec scan = scanOf(uri, "auto", "id", "string_col");
    assertTrue(scan.schema().apply("string_col").dataType() instanceof org.apache.spark.sql.types.BinaryType);
    Object goal = targetSize(1 << 20);
    assertDeviceScanUnderCoalesce(new PassThroughRule(spark).apply(transition(RapidsPlugin.HOST_TO_GPU, scan, goal)), goal);
  }

  @Test
  void outputHostKeepsThePluginsCopyAndSaysWhy() throws Exception {
    BatchScanExec scan = scanOf(uri, "host", "id", "int_col");
    SparkPlan t = transition(RapidsPlugin.HOST_TO_GPU, scan, targetSize(1 << 20));
    assertSame(t, new PassThroughRule(spark).apply(t));
    assertTrue(scan.scan().description().contains("note:"), scan.scan().description());
  }

  @Test
  void theHandoffFindsThePluginsSemaphoreVectorsAndBuilder() throws Exception {
    var plugin = Class.forName(RapidsHandoff.class.getName() + "$Plugin").getDeclaredConstructor();
    plugin.setAccessible(true);
    assertNotNull(plugin.newInstance());
    assertTrue(RapidsHandoff.targetBatchBytes(spark) > 0);
  }

  private static void assertDeviceScanUnderCoalesce(SparkPlan after, Object goal) throws Exception {
    assertEquals("com.nvidia.spark.rapids.GpuCoalesceBatches", after.getClass().getName(), after.treeString());
    assertEquals(goal, after.getClass().getMethod("goal").invoke(after));
    SparkPlan child = after.children().head();
    assertTrue(child instanceof BatchScanExec b && b.scan().getClass().getName().equals("io.gpudirect.spark.DeviceScan"),
        after.treeString());
    assertTrue(((BatchScanExec) child).supportsColumnar());
    assertTrue(((BatchScanExec) child).scan().description().contains("batches=device"));
  }

  private static BatchScanExec scanOf(String uri, String output, String... columns) {
    SparkPlan plan = spark.read().format("gpudirect").option("output", output).load(uri)
        .select(columns[0], java.util.Arrays.copyOfRange(columns, 1, columns.length))
        .queryExecution().executedPlan();
    BatchScanExec found = find(plan);
    assertNotNull(found, plan.treeString());
    return found;
  }

  private static BatchScanExec find(SparkPlan p) {
    if (p instanceof BatchScanExec b) {
      return b;
    }
    for (SparkPlan c : JavaConverters.seqAsJavaList(p.children())) {
      BatchScanExec b = find(c);
      if (b != null) {
        return b;
      }
    }
    return null;
  }

  private static Object targetSize(long bytes) throws Exception {
    return RapidsPlugin.sqlClass("com.nvidia.spark.rapids.TargetSize").getConstructor(long.class).newInstance(bytes);
  }

  /** The plugin's transition as GpuTransitionOverrides builds it. */
  private static SparkPlan transition(String name, SparkPlan child, Object goal) throws Exception {
    return (SparkPlan) RapidsPlugin.sqlClass(name)
        .getConstructor(SparkPlan.class, RapidsPlugin.sqlClass("com.nvidia.spark.rapids.CoalesceSizeGoal"))
        .newInstance(child, goal);
  }
}
