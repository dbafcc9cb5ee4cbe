package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hive-style partition directories ({@code key=value}) read through {@code format("gpudirect")}
 * give what {@code spark.read.parquet} gives on the same local directories: the same partition
 * columns, types and values (inferred, widened, escaped, null, or as a given schema says), the
 * same rows, and filters on those columns leave out the files their directories rule out.
 */
class PartitionDirectoriesTest {
  @TempDir
  static Path root;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws IOException {
    spark = LocalSessions.builder("gpudirect-partition-directories", 2)
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate();
    // Written by Spark itself: its escaping of names, its null directory.
    spark.sql("SELECT id, CAST(id % 3 AS INT) AS year, date_add(DATE'2024-02-27', CAST(id % 4 AS INT)) AS day,"
        + " CASE WHEN id % 5 = 0 THEN NULL ELSE concat('r/', CAST(id % 2 AS STRING), ' =%:x') END AS region,"
        + " id * 1.5 AS amount FROM range(0, 120)")
        .write().partitionBy("year", "day", "region").parquet(root.resolve("trips").toString());
    // Written by hand: what inference must tell apart, and what it must widen.
    part("inference/n=7/l=3000000000/d=12345678901234567890123/f=1.5/t=2024-01-01 10%3A00%3A00/s=abc");
    part("inference/n=8/l=-4/d=5/f=2/t=2024-01-02 00%3A00%3A00/s=01");
    part("mixed/k=1");
    part("mixed/k=x");
    part("widen/k=1");
    part("widen/k=2.5");
    // A file column that is also a directory name: the directory's value is the column's.
    spark.sql("SELECT id, CAST(id AS INT) AS x FROM range(0, 3)").write().parquet(root.resolve("overlap/x=5").toString());
    server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).build().start();
  }

  private static void part(String dir) {
    spark.sql("SELECT id FROM range(0, 2)").coalesce(1).write().parquet(root.resolve(dir).toString());
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @AfterEach
  void defaults() {
    spark.conf().unset("spark.sql.sources.partitionColumnTypeInference.enabled");
    spark.conf().unset("spark.sql.parquet.enableVectorizedReader");
  }

  /** Option output of our reads: auto here, where CI has no GPU; the GPU subclass reads with gpu. */
  protected String output() {
    return "auto";
  }

  private DataFrameReader ours() {
    return spark.read().format("gpudirect").option("output", output());
  }

  static String uri(String path) {
    return "gpudirect://127.0.0.1:" + server.port() + "/" + path;
  }

  private void sameAsSpark(String path, Function<DataFrameReader, DataFrameReader> options,
      Function<Dataset<Row>, Dataset<Row>> query) {
    sameAsSpark(path, options, options, query);
  }

  private void sameAsSpark(String path, Function<DataFrameReader, DataFrameReader> ourOptions,
      Function<DataFrameReader, DataFrameReader> theirOptions, Function<Dataset<Row>, Dataset<Row>> query) {
    Dataset<Row> ours = query.apply(ourOptions.apply(ours()).load(uri(path)));
    Dataset<Row> theirs = query.apply(theirOptions.apply(spark.read()).parquet(root.resolve(path).toString()));
    assertEquals(theirs.schema().toString(), ours.schema().toString(), path + ": schema");
    assertEquals(sorted(theirs), sorted(ours), path + ": rows");
  }

  private static List<String> sorted(Dataset<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows.collectAsList()) {
      out.add(r.toString());
    }
    out.sort(null);
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"trips", "inference", "mixed", "widen", "overlap"})
  void columnsTypesAndValuesAreSparks(String path) {
    sameAsSpark(path, r -> r, d -> d);
  }

  @Test
  void withoutTypeInferenceEveryColumnIsAString() {
    spark.conf().set("spark.sql.sources.partitionColumnTypeInference.enabled", "false");
    sameAsSpark("inference", r -> r, d -> d);
  }

  @Test
  void rowsFromSparksRowReaderGetThemToo() {
    spark.conf().set("spark.sql.parquet.enableVectorizedReader", "false");
    sameAsSpark("trips", r -> r, d -> d.where("amount > 10"));
  }

  @Test
  void aGivenSchemaTypesTheColumnsAndPlacesThem() {
    sameAsSpark("trips", r -> r.schema("year STRING, id LONG"), d -> d);
  }

  @Test
  void basePathKeepsTheColumnsOfTheDirectoriesAboveTheLoadedOne() {
    sameAsSpark("trips/year=1", r -> r.option("basePath", "trips"),
        r -> r.option("basePath", root.resolve("trips").toString()), d -> d);
    sameAsSpark("trips/year=1", r -> r.option("basePath", uri("trips")),
        r -> r.option("basePath", root.resolve("trips").toString()), d -> d);
    Dataset<Row> ours = ours().option("basePath", "trips").load(uri("trips/year=1"));
    assertEquals("[id, amount, year, day, region]", List.of(ours.schema().fieldNames()).toString());
    Exception e = assertThrows(Exception.class,
        () -> ours().option("basePath", "inference").load(uri("trips/year=1")).schema());
    assertTrue(e.getMessage().contains("Option basePath inference is not a directory above"), e.getMessage());
  }

  @Test
  void filtersOnPartitionColumnsLeaveOutTheFilesTheirDirectoriesRuleOut() {
    String filter = "year = 2 AND day >= DATE'2024-02-29' AND region IS NOT NULL";
    sameAsSpark("trips", r -> r, d -> d.where(filter));
    Dataset<Row> all = ours().load(uri("trips"));
    String plan = scanOf(all.where(filter));
    java.util.regex.Matcher m = java.util.regex.Pattern.compile(" files=(\\d+) \\(of (\\d+) listed\\)").matcher(plan);
    assertTrue(m.find(), plan);
    long read = Long.parseLong(m.group(1));
    long listed = Long.parseLong(m.group(2));
    // 3 years x 4 days x 3 regions of directories; the filter keeps 2 days x 2 regions of one year.
    assertTrue(read > 0 && read <= listed / 4, "read " + read + " of " + listed + ": " + plan);
    assertEquals(read, driverMetric(all.where(filter), "files read"));
    assertEquals(listed - read, driverMetric(all.where(filter), "files left out by partition filters"));
    sameAsSpark("trips", r -> r, d -> d.where("year = 99"));
    sameAsSpark("trips", r -> r, d -> d.where("region IS NULL AND NOT (year <=> 1)"));
    // A filter that also names a file column prunes nothing on its own, and loses no rows.
    sameAsSpark("trips", r -> r, d -> d.where("year = 2 OR amount < 3"));
    sameAsSpark("trips", r -> r, d -> d.where("region LIKE 'r/1%' AND year IN (0, 1)"));
  }

  @Test
  void directoriesThatDisagreeAreRefusedNamingThem() throws IOException {
    Path bad = root.resolve("conflict");
    for (String dir : new String[] {"a=1", "b=2"}) {
      Files.createDirectories(bad.resolve(dir));
      Files.copy(TestData.root().resolve("parquet/alltypes_plain.parquet"), bad.resolve(dir).resolve("f.parquet"),
          StandardCopyOption.REPLACE_EXISTING);
    }
    Exception e = assertThrows(Exception.class, () -> ours().load(uri("conflict")).schema());
    assertTrue(e.getMessage().contains("Conflicting partition directories: conflict/a=1 has partition columns [a]"
        + " but conflict/b=2 has [b]"), e.getMessage());
  }

  @Test
  void arrowFilesInPartitionDirectoriesGetTheColumnsToo() throws IOException {
    String file = "generated_primitive.arrow_file";
    for (String dir : new String[] {"arrow/k=1", "arrow/k=2"}) {
      Files.createDirectories(root.resolve(dir));
      Files.copy(TestData.root().resolve("arrow").resolve(file), root.resolve(dir).resolve(file),
          StandardCopyOption.REPLACE_EXISTING);
    }
    // Binary columns left out: their byte arrays print as identities, not contents.
    Dataset<Row> one = withoutBinary(ours().load(uri("arrow/k=1/" + file)));
    Dataset<Row> both = withoutBinary(ours().load(uri("arrow")));
    assertEquals(one.schema().add("k", "int").toString(), both.schema().toString());
    List<String> expected = new ArrayList<>();
    for (int k = 1; k <= 2; k++) {
      expected.addAll(sorted(one.withColumn("k", org.apache.spark.sql.functions.lit(k))));
    }
    expected.sort(null);
    assertEquals(expected, sorted(both));
    assertEquals(sorted(one.withColumn("k", org.apache.spark.sql.functions.lit(2))), sorted(both.where("k = 2")));
  }

  private static Dataset<Row> withoutBinary(Dataset<Row> d) {
    for (org.apache.spark.sql.types.StructField f : d.schema().fields()) {
      if (f.dataType() instanceof org.apache.spark.sql.types.BinaryType) {
        d = d.drop(f.name());
      }
    }
    return d;
  }

  /** A driver metric of the query's gpudirect scan, as the SQL tab shows it. */
  private static long driverMetric(Dataset<Row> d, String description) {
    d.collectAsList();
    List<SparkPlan> scans = new ArrayList<>();
    collect(d.queryExecution().executedPlan(), scans);
    for (SparkPlan p : scans) {
      for (var m : scala.collection.JavaConverters.mapAsJavaMap(p.metrics()).values()) {
        if (description.equals(m.name().getOrElse(() -> ""))) {
          return m.value();
        }
      }
    }
    throw new AssertionError("no metric '" + description + "' in " + d.queryExecution().executedPlan());
  }

  private static void collect(SparkPlan p, List<SparkPlan> into) {
    if (p instanceof org.apache.spark.sql.execution.datasources.v2.BatchScanExec) {
      into.add(p);
    }
    if (p instanceof org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec a) {
      collect(a.executedPlan(), into);
    }
    for (SparkPlan c : scala.collection.JavaConverters.seqAsJavaList(p.children())) {
      collect(c, into);
    }
  }

  private static String scanOf(Dataset<Row> d) {
    d.collectAsList();
    SparkPlan plan = d.queryExecution().executedPlan();
    return plan.toString().lines().filter(l -> l.contains("GpuDirectScan")).findFirst().orElse(plan.toString());
  }
}
