package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.ucx.UcxLibrary;
import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spark reads through transport=rdma over real UCX (libucp here; UCX's TCP transport, since no
 * machine here has an RDMA NIC) and gets the rows spark.read.parquet gets; the scan's metric
 * and explain() say ucx:tcp, never rdma. Skips, saying why, where libucp is missing.
 */
class UcxTransportIT {
  private static BlockServer server;

  @BeforeAll
  static void start() {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    // --rdma on with the default provider: UCX, since libucp loads.
    server = BlockServer.builder().root(LocalSpark.testdata()).bindAddress("127.0.0.1").port(0)
        .rdma(RdmaMode.ON).build().start();
  }

  @AfterAll
  static void stop() {
    RemoteStores.closeAll();
    if (server != null) {
      server.close();
    }
  }

  static Stream<String> files() throws IOException {
    return LocalSpark.testdataFiles("parquet", n -> n.endsWith(".parquet"));
  }

  private static Dataset<Row> overUcx(SparkSession spark, String path) {
    return spark.read().format("gpudirect").option("transport", "rdma")
        .load("gpudirect://127.0.0.1:" + server.port() + "/" + path);
  }

  @ParameterizedTest
  @MethodSource("files")
  void parquetReadsOverUcxGetTheRowsSparkGets(String name) {
    SparkSession spark = LocalSpark.get();
    String local = LocalSpark.testdata().resolve("parquet").resolve(name).toString();
    List<Row> expected;
    try {
      expected = spark.read().parquet(local).collectAsList();
    } catch (Exception vectorizedRefused) {
      // As in ParquetConformanceIT: compared with Spark's row-based reader then.
      spark.conf().set("spark.sql.parquet.enableVectorizedReader", "false");
      expected = spark.read().parquet(local).collectAsList();
    }
    try {
      List<Row> actual = overUcx(spark, "parquet/" + name).collectAsList();
      assertEquals(expected, actual, name);
    } finally {
      spark.conf().unset("spark.sql.parquet.enableVectorizedReader");
    }
  }

  @Test
  void theMetricAndExplainNameUcxTcpNotRdma() throws Exception {
    SparkSession spark = LocalSpark.get();
    String name = files().findFirst().orElseThrow();
    Dataset<Row> df = overUcx(spark, "parquet/" + name);
    df.collectAsList();
    assertEquals("ucx:tcp", ScanMetricValues.displayed(df).get("transport"));
    String plan = df.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("transport=ucx:tcp (transport=rdma requested (UCX, since libucp loads"), plan);
    assertTrue(plan.contains("carried by ucx:tcp"), plan);
  }
}
