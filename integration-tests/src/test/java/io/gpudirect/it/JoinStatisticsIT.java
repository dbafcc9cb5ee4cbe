package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.collection.JavaConverters;

/**
 * A gpudirect scan reports its size, so Spark joins a fact table to small dimension tables
 * with the same strategies as over {@code spark.read.parquet} on the same files: broadcasts,
 * not the sort-merge joins it plans for a table of unknown (8 EiB) size.
 */
class JoinStatisticsIT {
  /** Below the fact table's scan, above every dimension table's. */
  private static final String THRESHOLD = "262144";
  private static final String QUERY = "SELECT c.name, r.region, count(*) AS n, sum(f.amount) AS total"
      + " FROM %1$sfact f JOIN %1$scustomer c ON f.customer = c.id JOIN %1$sregion r ON c.region = r.id"
      + " JOIN %1$sproduct p ON f.product = p.id WHERE p.kind <> 'toy' GROUP BY c.name, r.region";
  @TempDir
  static Path tmp;
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    SparkSession spark = LocalSpark.get();
    spark.range(0, 400_000, 1, 2).selectExpr("id", "cast(id % 97 AS int) AS customer",
        "cast(id % 13 AS int) AS product", "rand(3) * 100 AS amount", "uuid() AS note")
        .write().parquet(tmp.resolve("fact").toString());
    spark.range(0, 97, 1, 1).selectExpr("cast(id AS int) AS id", "concat('customer ', id) AS name",
        "cast(id % 5 AS int) AS region").write().parquet(tmp.resolve("customer").toString());
    spark.range(0, 5, 1, 1).selectExpr("cast(id AS int) AS id", "concat('region ', id) AS region")
        .write().parquet(tmp.resolve("region").toString());
    spark.range(0, 13, 1, 1).selectExpr("cast(id AS int) AS id", "IF(id % 3 = 0, 'toy', 'tool') AS kind")
        .write().parquet(tmp.resolve("product").toString());
    fixture = ServerFixture.serve(tmp);
  }

  @AfterAll
  static void stop() {
    fixture.close();
    for (String t : new String[] {"fact", "customer", "region", "product"}) {
      LocalSpark.get().catalog().dropTempView("local_" + t);
      LocalSpark.get().catalog().dropTempView("remote_" + t);
    }
  }

  @ParameterizedTest(name = "adaptive execution {0}")
  @ValueSource(booleans = {false, true})
  void smallTablesAreJoinedAsOverSparksOwnParquet(boolean adaptive) {
    SparkSession spark = LocalSpark.get();
    for (String t : new String[] {"fact", "customer", "region", "product"}) {
      spark.read().parquet(tmp.resolve(t).toString()).createOrReplaceTempView("local_" + t);
      spark.read().format("gpudirect").load(fixture.uri(t)).createOrReplaceTempView("remote_" + t);
    }
    String before = spark.conf().get("spark.sql.adaptive.enabled");
    spark.conf().set("spark.sql.adaptive.enabled", Boolean.toString(adaptive));
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", THRESHOLD);
    try {
      Dataset<Row> local = spark.sql(String.format(QUERY, "local_"));
      Dataset<Row> remote = spark.sql(String.format(QUERY, "remote_"));
      List<Row> expected = sorted(local);
      List<Row> actual = sorted(remote);
      Map<String, Integer> localJoins = joins(local.queryExecution().executedPlan());
      Map<String, Integer> remoteJoins = joins(remote.queryExecution().executedPlan());
      assertEquals(3, localJoins.getOrDefault("BroadcastHashJoinExec", 0),
          "the fixture is meant to make Spark broadcast all three dimension tables: " + localJoins);
      assertEquals(localJoins, remoteJoins, "join strategies over gpudirect and over spark.read.parquet");
      assertEquals(expected, actual);
      assertEquals(97, expected.size(), "one group per customer");
    } finally {
      spark.conf().set("spark.sql.adaptive.enabled", before);
      spark.conf().unset("spark.sql.autoBroadcastJoinThreshold");
    }
  }

  @Test
  void theSizeIsScaledByTheColumnsReadAndTheRowsCounted() throws java.io.IOException {
    SparkSession spark = LocalSpark.get();
    Dataset<Row> all = spark.read().format("gpudirect").load(fixture.uri("fact"));
    BigInteger whole = all.queryExecution().optimizedPlan().stats().sizeInBytes().bigInteger();
    BigInteger oneColumn = all.select("customer").queryExecution().optimizedPlan().stats().sizeInBytes().bigInteger();
    BigInteger files = BigInteger.valueOf(parquetBytes(tmp.resolve("fact")));
    assertEquals(files, whole, "all columns: the bytes of the files");
    assertEquals(400_000L, all.queryExecution().optimizedPlan().stats().rowCount().get().longValue(),
        "rows from the Parquet footers");
    // Spark's rule for a projection: row sizes with 8 bytes of overhead each, one int of
    // (long, int, int, double, string) = 8 + 4 of 8 + 44.
    assertEquals(files.multiply(BigInteger.valueOf(12)).divide(BigInteger.valueOf(52)), oneColumn,
        "one int column of five");
  }

  private static long parquetBytes(Path dir) throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".parquet")).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static List<Row> sorted(Dataset<Row> df) {
    return new ArrayList<>(df.orderBy("name", "region").collectAsList());
  }

  /** Join operators of the plan that ran, by class, looking into adaptive stages. */
  private static Map<String, Integer> joins(SparkPlan plan) {
    Map<String, Integer> counts = new TreeMap<>();
    count(plan, counts);
    return counts;
  }

  private static void count(SparkPlan plan, Map<String, Integer> counts) {
    if (plan instanceof AdaptiveSparkPlanExec) {
      count(((AdaptiveSparkPlanExec) plan).executedPlan(), counts);
      return;
    }
    if (plan instanceof QueryStageExec) {
      count(((QueryStageExec) plan).plan(), counts);
      return;
    }
    if (plan instanceof ReusedExchangeExec) {
      count(((ReusedExchangeExec) plan).child(), counts);
      return;
    }
    String name = plan.getClass().getSimpleName();
    if (name.endsWith("JoinExec")) {
      counts.merge(name, 1, Integer::sum);
    }
    for (SparkPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      count(child, counts);
    }
  }
}
