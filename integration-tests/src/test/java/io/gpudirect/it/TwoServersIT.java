package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One dataset whose files are spread over two servers reads complete. */
class TwoServersIT {
  @TempDir
  Path tmp;

  @Test
  void readsEveryFileOfBothServers() throws Exception {
    SparkSession spark = LocalSpark.get();
    Path a = Files.createDirectories(tmp.resolve("a"));
    Path b = Files.createDirectories(tmp.resolve("b"));
    spark.range(0, 50_000, 1, 2).selectExpr("id", "cast(id * 3 AS string) AS s")
        .write().parquet(a.resolve("ds").toString());
    spark.range(50_000, 90_000, 1, 3).selectExpr("id", "cast(id * 3 AS string) AS s")
        .write().parquet(b.resolve("ds").toString());
    List<Row> expected = spark.read().parquet(a.resolve("ds").toString(), b.resolve("ds").toString())
        .orderBy("id").collectAsList();

    try (ServerFixture first = ServerFixture.serve(a); ServerFixture second = ServerFixture.serve(b)) {
      Dataset<Row> byUris = spark.read().format("gpudirect").load(first.uri("ds") + "," + second.uri("ds"));
      assertEquals(expected, byUris.orderBy("id").collectAsList());

      Dataset<Row> byOption = spark.read().format("gpudirect")
          .option("servers", "127.0.0.1:" + first.server.port() + ",127.0.0.1:" + second.server.port())
          .load("/ds");
      assertEquals(90_000, byOption.count());
      assertEquals(expected, byOption.orderBy("id").collectAsList());
    }
  }
}
