package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import io.gpudirect.server.LoginTries;
import io.gpudirect.server.ManualLoginClock;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark's own file readers ({@code spark.read.parquet}, {@code csv}, {@code json}) over
 * {@code gpudirect://} paths give the rows they give on the same local files, with no
 * configuration: the file system comes from {@code META-INF/services}.
 */
class HadoopFileSystemIT {
  @TempDir
  static Path data;

  private static ServerFixture fixture;

  @BeforeAll
  static void writeDataAndServe() {
    SparkSession spark = LocalSpark.get();
    Dataset<Row> df = spark.range(0, 20_000, 1, 3).selectExpr(
        "id",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE concat('name, \"', id, '\" ü') END AS name",
        "id * 0.25 AS amount",
        "id % 3 = 0 AS flag",
        "date_add(DATE'2024-01-01', cast(id % 400 AS int)) AS day",
        "timestamp_seconds(1700000000 + id) AS at",
        "cast(id % 4 AS int) AS part");
    df.write().option("header", "true").csv(data.resolve("csv").toString());
    df.write().json(data.resolve("json").toString());
    df.write().parquet(data.resolve("parquet").toString());
    df.write().partitionBy("part").parquet(data.resolve("partitioned").toString());
    fixture = ServerFixture.serve(data);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void parquetReadsLikeLocal() {
    assertSameRows("parquet", r -> r);
  }

  @Test
  void csvReadsLikeLocal() {
    assertSameRows("csv", r -> r.option("header", "true").option("inferSchema", "true"));
  }

  @Test
  void multiLineCsvReadsLikeLocal() {
    // multiLine reads each file whole through one stream instead of by line splits.
    assertSameRows("csv", r -> r.option("header", "true").option("inferSchema", "true").option("multiLine", "true"));
  }

  @Test
  void jsonReadsLikeLocal() {
    assertSameRows("json", r -> r);
  }

  @Test
  void partitionDiscoveryThroughDirectoryListing() {
    Dataset<Row> remote = LocalSpark.get().read().parquet(fixture.uri("partitioned"));
    Dataset<Row> local = LocalSpark.get().read().parquet(data.resolve("partitioned").toString());
    assertEquals(local.schema(), remote.schema());
    assertEquals(sorted(local), sorted(remote));
    assertEquals(5000, remote.where("part = 2").count());
  }

  @Test
  void globbedPathsReadOnlyTheMatchingFiles() throws Exception {
    String glob = fixture.uri("csv/part-00001*.csv");
    String localGlob = data.resolve("csv").toString() + "/part-00001*.csv";
    Dataset<Row> remote = LocalSpark.get().read().option("header", "true").csv(glob);
    Dataset<Row> local = LocalSpark.get().read().option("header", "true").csv(localGlob);
    long count = local.count();
    assertTrue(count > 0 && count < 20_000, "the glob matches one of three files: " + count);
    assertEquals(sorted(local), sorted(remote));
    assertEquals(List.of(fixture.uri("csv")), List.of(remote.inputFiles()).stream()
        .map(f -> f.substring(0, f.lastIndexOf('/'))).distinct().toList());
  }

  @Test
  void writingFailsSayingTheFileSystemIsReadOnly() throws Exception {
    Dataset<Row> df = LocalSpark.get().range(3).toDF();
    Exception e = assertThrows(Exception.class, () -> df.write().parquet(fixture.uri("out")));
    assertTrue(causes(e).contains("read-only"), causes(e));
    assertFalse(Files.exists(data.resolve("out")));
  }

  @Test
  void hadoopShellListsAndCats() throws Exception {
    String ls = shell(0, "-ls", fixture.uri("csv"));
    long parts = ls.lines().filter(l -> l.contains(fixture.uri("csv/part-"))).count();
    assertEquals(3, parts, ls);
    String cat = shell(0, "-cat", fixture.uri("csv/part-00000*.csv"));
    String local;
    try (var files = Files.list(data.resolve("csv"))) {
      Path part0 = files.filter(p -> p.getFileName().toString().startsWith("part-00000")).findFirst().orElseThrow();
      local = Files.readString(part0);
    }
    assertEquals(local, cat);
    String refused = shell(1, "-mkdir", fixture.uri("newdir"));
    assertTrue(refused.contains("read-only"), refused);
  }

  /**
   * From an address backing off after failed logins, the file system with the right secret
   * fails saying the server is throttling and for how long, not that the secret is wrong; once
   * the wait is over, it reads.
   */
  @Test
  void aThrottledLoginIsToldAsThrottlingWithItsWait(@TempDir Path root) throws Exception {
    Files.writeString(root.resolve("a.txt"), "throttled");
    byte[] secret = "hadoop-throttle-secret-long-enough".getBytes(StandardCharsets.UTF_8);
    ManualLoginClock clock = new ManualLoginClock();
    try (ServerFixture throttled = ServerFixture.serve(root, secret, clock)) {
      LoginTries.failFrom("127.0.0.1", throttled.server.port(), LoginTries.FREE_FAILURES);
      Configuration conf = new Configuration();
      conf.set("spark.gpudirect.auth.secret", new String(secret, StandardCharsets.UTF_8));
      org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(throttled.uri("a.txt"));
      try (FileSystem fs = FileSystem.newInstance(file.toUri(), conf)) {
        IOException e = assertThrows(IOException.class, () -> fs.getFileStatus(file));
        assertTrue(e.getMessage().startsWith("Cannot reach " + file + ": Gpudirect server 127.0.0.1:"
            + throttled.server.port() + " is throttling logins from this client's address, so it did"
            + " not check the secret in spark.gpudirect.auth.secret"), e.getMessage());
        assertTrue(e.getMessage().contains("logins from 127.0.0.1 are refused for another 1 s after "
            + LoginTries.FREE_FAILURES + " failed logins from that address"), e.getMessage());

        clock.advance(java.time.Duration.ofSeconds(1));
        assertEquals(9, fs.getFileStatus(file).getLen());
      }
    }
  }

  /** Runs Hadoop's FsShell in this JVM; returns what it printed, after checking its exit code. */
  private static String shell(int expectedExit, String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream oldOut = System.out;
    PrintStream oldErr = System.err;
    PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8);
    int code;
    try {
      System.setOut(capture);
      System.setErr(capture);
      FsShell shell = new FsShell(new Configuration());
      code = shell.run(args);
      shell.close();
    } finally {
      System.setOut(oldOut);
      System.setErr(oldErr);
    }
    String printed = out.toString(StandardCharsets.UTF_8);
    assertEquals(expectedExit, code, printed);
    return printed;
  }

  private static void assertSameRows(String dir, Function<DataFrameReader, DataFrameReader> configure) {
    SparkSession spark = LocalSpark.get();
    Map<String, Function<String, Dataset<Row>>> readers = Map.of(
        "parquet", p -> configure.apply(spark.read()).parquet(p),
        "csv", p -> configure.apply(spark.read()).csv(p),
        "json", p -> configure.apply(spark.read()).json(p));
    Dataset<Row> local = readers.get(dir).apply(data.resolve(dir).toString());
    Dataset<Row> remote = readers.get(dir).apply(fixture.uri(dir));
    assertEquals(local.schema(), remote.schema(), dir + " schema");
    List<Row> expected = sorted(local);
    assertEquals(20_000, expected.size());
    assertEquals(expected, sorted(remote), dir + " rows");
    assertTrue(remote.inputFiles()[0].startsWith("gpudirect://"), remote.inputFiles()[0]);
  }

  private static List<Row> sorted(Dataset<Row> df) {
    return df.orderBy("id").collectAsList();
  }

  private static String causes(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append('\n');
    }
    return sb.toString();
  }
}
