package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.server.BlockServer;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The size Spark's planner sees for a gpudirect read is the one it sees for
 * {@code spark.read.parquet} of the same files, whatever the query reads of them, so that it
 * plans the same joins: a table it broadcasts over one it broadcasts over the other. (TPC-H's q7,
 * q8, q10 and q13 at SF 1 broadcast orders over gpudirect and shuffle it over local files when
 * the size was scaled by the columns' widths alone, without Spark's 8 bytes per row.)
 */
class ScanStatisticsTest {
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSessions.builder("gpudirect-scan-statistics", 2).getOrCreate();
    spark.sql("SELECT id AS key, CAST(id % 7 AS INT) AS small, id * 0.25 AS amount,"
        + " concat('comment ', id) AS note, date_add(DATE'2024-01-01', CAST(id % 300 AS INT)) AS day,"
        + " CAST(id % 3 AS INT) AS part FROM range(0, 20000)")
        .repartition(3).write().partitionBy("part").parquet(root.resolve("t").toString());
    server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).build().start();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"every column", "one column", "two columns under a filter", "no column",
      "a partition column", "a partition filter"})
  void theSizeIsThatOfSparksOwnParquetScan(String query) {
    Function<Dataset<Row>, Dataset<Row>> q = switch (query) {
      case "every column" -> df -> df;
      case "one column" -> df -> df.select("key");
      case "two columns under a filter" -> df -> df.where("day > DATE'2024-05-01' AND note <> 'x'").select("key", "small");
      case "no column" -> df -> df.groupBy().count();
      case "a partition column" -> df -> df.select("part", "amount");
      case "a partition filter" -> df -> df.where("part = 1").select("key");
      default -> throw new IllegalArgumentException(query);
    };
    BigInteger local = size(q.apply(spark.read().parquet(root.resolve("t").toString())));
    BigInteger remote = size(q.apply(spark.read().format("gpudirect")
        .load("gpudirect://127.0.0.1:" + server.port() + "/t")));
    assertEquals(local, remote, query + ": the size the planner sees");
  }

  private static BigInteger size(Dataset<Row> df) {
    return df.queryExecution().optimizedPlan().stats().sizeInBytes().bigInteger();
  }
}
