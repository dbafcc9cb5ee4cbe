package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpudirect.testing.Medians;
import io.gpudirect.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TPC-H runner of docs/benchmarks.md on the CPU, in one local Spark, at SF 0.01 (10 MB): the
 * generated tables (the specification's types, the cache on disk), made once for all tests
 * whichever runs first, and the 22 queries, whose answers through {@code format("gpudirect")}
 * from a real server on loopback must be those of {@code spark.read.parquet} on the same files;
 * and, with one or two queries, what lets a scale factor run in several sittings: warm-up passes
 * at a scale factor of their own, and the merge of the result files of runs of the same settings.
 */
class TpchRunnerTest {
  /**
   * The runner's own workings (its tables, warm-ups, merges, the server's cores): on the Spark 3.5
   * line only (the pom's spark4 profile), where they are the same code; every query's answers are
   * compared on Spark 4 too, by {@link #everyQueryAnswersAlikeOnBothSides}.
   */
  private static final String RUNNER_ONLY = "spark35-line";

  @TempDir
  static Path root;
  private static TpchOptions options;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    options = new TpchOptions(0.01, 1, 0, 0.01, TpchQueries.select("all"), root, false, "local[2]",
        root.resolve("tpch.json"), Optional.of(root.resolve("profile")), 1, Map.of("spark.sql.shuffle.partitions", "4"), Optional.empty());
    spark = TpchRunner.session(options);
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void everyQueryAnswersAlikeOnBothSides() throws Exception {
    TpchResults results = TpchRunner.run(spark, options, r -> {});
    TpchReport.print(results, System.out);
    TpchReport.write(results, options.resultFile());

    assertEquals(TpchQueries.COUNT, results.queries.size());
    assertEquals(List.of(), results.differences(), "answers that differ");
    for (TpchResults.QueryResult q : results.queries) {
      // an empty answer would be equal whatever the reads returned
      assertTrue(q.rows > 0, q.query.name() + " has no rows at SF 0.01");
      // every run heard its stages' shuffle writes (q1 aggregates, so it shuffles)
      for (TpchRunner.Run run : Stream.concat(q.local.stream(), q.gpudirect.stream()).toList()) {
        assertTrue(q.query.name().equals("q1") ? run.shuffleBytes() > 0 : run.shuffleBytes() >= 0, q.query.name() + ": " + run);
      }
    }
    assertTrue(Files.readString(options.resultFile()).contains("\"query\" : \"q22\""));
    // The profile: each side's planning, the stages it ran, and its final plan of q1 with the SQL
    // tab's metrics, the scan's rows among them.
    String local = Files.readString(options.profileDir().orElseThrow().resolve("q1-local-r1.txt"));
    String gpudirect = Files.readString(options.profileDir().orElseThrow().resolve("q1-gpudirect-r1.txt"));
    for (String profile : List.of(local, gpudirect)) {
      assertTrue(profile.contains("| number of output rows: 60,175"), profile);
      assertTrue(profile.matches("(?s)planning: .*optimization \\d+ ms.*job \\d+ starts.*stage \\d+ ends after \\d+ ms.*"),
          profile);
      // What the kernel did meanwhile: this JVM's system CPU and the host's direct reclaim (Linux here).
      assertTrue(profile.matches("(?s).*\nhost: this JVM [0-9.]+ s user, [0-9.]+ s system; direct reclaim \\d+ stalls.*"), profile);
    }
  }

  @Test
  @Tag(RUNNER_ONLY)
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void tablesHaveTheSpecificationsTypesAndAreMadeOnce() throws Exception {
    Path dir = TpchDataset.at(spark, 0.01, root);
    assertEquals(root.resolve("sf0.01"), dir);
    assertEquals("scale factor 0.01\ngenerator io.trino.tpch:tpch:1.2\n", Files.readString(dir.resolve(TpchDataset.MARKER)));

    Dataset<Row> lineitem = spark.read().parquet(dir.resolve("lineitem").toString());
    StructType schema = lineitem.schema();
    assertEquals(DataTypes.LongType, schema.apply("l_orderkey").dataType());
    assertEquals(DataTypes.IntegerType, schema.apply("l_linenumber").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_quantity").dataType());
    assertEquals(DataTypes.createDecimalType(15, 2), schema.apply("l_extendedprice").dataType());
    assertEquals(DataTypes.DateType, schema.apply("l_shipdate").dataType());
    assertEquals(DataTypes.StringType, schema.apply("l_comment").dataType());
    // The first line item at SF 0.01: 17 of part 1552, whose retail price by the specification's
    // formula (clause 4.2.3) is (90000 + (1552 / 10) % 20001 + 100 * (1552 % 1000)) / 100 = 1453.55.
    assertEquals("[1,1552,93,1,17.00,24710.35,0.04,0.02,N,O,1996-03-13]", lineitem
        .selectExpr("l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity", "l_extendedprice",
            "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate")
        .where("l_orderkey = 1 AND l_linenumber = 1").collectAsList().get(0).toString());
    assertEquals(60_175, lineitem.count());
    assertEquals(25, spark.read().parquet(dir.resolve("nation").toString()).count());

    List<String> files = dataFiles(dir);
    assertEquals(dir, TpchDataset.at(spark, 0.01, root));
    assertEquals(files, dataFiles(dir), "a complete copy is reused, not made again");

    Files.delete(dir.resolve(TpchDataset.MARKER)); // as a run stopped half-way leaves it
    TpchDataset.at(spark, 0.01, root);
    assertTrue(Files.exists(dir.resolve(TpchDataset.MARKER)));
    assertNotEquals(files, dataFiles(dir), "an incomplete copy is made again");
    assertEquals(60_175, spark.read().parquet(dir.resolve("lineitem").toString()).count(), "and replaced, not added to");
  }

  @Test
  @Tag(RUNNER_ONLY)
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void warmsUpAtAScaleFactorOfItsOwnBeforeTheTimedRounds() throws Exception {
    TpchOptions o = tiny("16", 1, 1, 0.001, "warmup.json");
    TpchResults results = TpchRunner.run(spark, o, r -> {});
    TpchReport.print(results, System.out);
    TpchReport.write(results, o.resultFile());

    Path warmupTables = root.resolve("sf0.001");
    assertTrue(Files.exists(warmupTables.resolve(TpchDataset.MARKER)), "the warm-up's tables, made for it");
    // q16 counts groups of parts, which a tenth of the scale factor has fewer of.
    SparkSession reference = spark.newSession();
    for (String table : List.of("part", "partsupp", "supplier")) {
      reference.read().parquet(warmupTables.resolve(table).toString()).createOrReplaceTempView(table);
    }
    long atWarmupScale = reference.sql(TpchQueries.get(16).sql()).count();
    TpchResults.Launch launch = results.launches.get(0);
    assertEquals(atWarmupScale, launch.warmupRows(), "the warm-up's answers are those of SF 0.001");
    assertNotEquals(atWarmupScale, results.queries.get(0).rows, "and the timed round's those of SF 0.01");
    assertTrue(launch.warmupReferenceSeconds() > 0 && launch.warmupMeasuredSeconds() > 0, launch.toString());
    assertEquals(1, results.queries.get(0).local.size(), "the warm-up is not timed");
    assertEquals("1 warm-up pass at SF 0.001 (its own tables)", results.settings.warmup());
    String json = Files.readString(o.resultFile());
    assertTrue(json.contains("\"warmedUp\" : \"1 warm-up pass at SF 0.001 (its own tables)\""), json);
    assertTrue(json.contains("\"warmupScaleFactor\" : 0.001"), json);
  }

  @Test
  void aWarmUpScaleFactorWithoutWarmUpsIsRefused() {
    var e = assertThrows(IllegalArgumentException.class, () -> tiny("6", 1, 0, 1, "none.json"));
    assertEquals("gpudirect.tpch.warmupSf=1 with gpudirect.tpch.warmups=0: nothing would warm up at it; set warmups"
        + " to 1 or more, or leave warmupSf out", e.getMessage());
  }

  /**
   * {@code serverCpus} puts the server on cores of its own, as a storage host would be: the
   * process the runner starts is allowed those CPUs and no other, and the result file says so.
   */
  @Test
  @Tag(RUNNER_ONLY)
  void theServerRunsOnTheCpusNamedAndTheResultsSaySo() throws Exception {
    // The first CPU this JVM may run on (a CI machine's container may not offer CPU 0).
    String cpu = cpusAllowed("self").split("[,-]")[0];
    try (ServerProcess.Running server = ServerProcess.start(TpchRunnerTest.class, Optional.of(cpu), root.toString())) {
      assertEquals(cpu, cpusAllowed(String.valueOf(server.process().handle().pid())), "the server's CPUs");
    }
    System.setProperty("gpudirect.tpch.serverCpus", cpu);
    try {
      TpchSettings settings = TpchSettings.of(TpchOptions.fromSystemProperties(), "local", "remote");
      assertEquals(cpu, settings.serverCpus());
    } finally {
      System.clearProperty("gpudirect.tpch.serverCpus");
    }
    assertEquals(null, TpchSettings.of(TpchOptions.fromSystemProperties(), "local", "remote").serverCpus(),
        "unset: wherever the system puts it");
    var e = assertThrows(IllegalArgumentException.class, () -> new TpchOptions(0.01, 1, 0, 0.01,
        TpchQueries.select("6"), root, false, "local[2]", root.resolve("x.json"), Optional.empty(), 1, Map.of(),
        Optional.of("two,three")));
    assertEquals("gpudirect.tpch.serverCpus=two,three: a list of CPUs such as 2,3 or 4-7", e.getMessage());
  }

  /** The CPUs process {@code pid} ("self": this JVM) may run on, as /proc lists them ("0-3,8"). */
  private static String cpusAllowed(String pid) throws IOException {
    String field = "Cpus_allowed_list:";
    return Files.readAllLines(Path.of("/proc", pid, "status")).stream().filter(l -> l.startsWith(field))
        .findFirst().orElseThrow().substring(field.length()).trim();
  }

  @Test
  void theSparkSettingsGivenAreRecordedWithoutTheirSecrets() {
    System.setProperty("spark.sql.shuffle.partitions", "7");
    System.setProperty("spark.gpudirect.auth.secret", "hunter2");
    try {
      TpchSettings settings = TpchSettings.of(TpchOptions.fromSystemProperties(), "local", "remote");
      assertEquals("7", settings.spark().get("spark.sql.shuffle.partitions"));
      assertEquals("(redacted)", settings.spark().get("spark.gpudirect.auth.secret"));
    } finally {
      System.clearProperty("spark.sql.shuffle.partitions");
      System.clearProperty("spark.gpudirect.auth.secret");
    }
  }

  @Test
  @Tag(RUNNER_ONLY)
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void runsOfTheSameSettingsMergeIntoOneReportOverAllTheirRounds() throws Exception {
    Path a = runAndWrite(tiny("6", 1, 0, 0.01, "a.json"));
    List<String> soFar = new ArrayList<>();
    TpchOptions twoRounds = tiny("6", 2, 0, 0.01, "b.json");
    TpchReport.write(TpchRunner.run(spark, twoRounds, r -> soFar.add(r.rounds() + " " + r.queries.get(0).local.size())),
        twoRounds.resultFile());
    assertEquals(List.of("1 1", "2 2"), soFar, "the results after each timed round, for a run stopped short");
    Path b = twoRounds.resultFile();

    TpchResults merged = TpchMerge.merge(TpchMerge.files(a + ", " + b));
    TpchReport.print(merged, System.out);
    TpchResults first = TpchReport.read(a);
    TpchResults second = TpchReport.read(b);
    assertEquals(3, merged.rounds());
    assertEquals(List.of(first.launches.get(0), second.launches.get(0)), merged.launches);
    TpchResults.QueryResult q6 = merged.queries.get(0);
    List<TpchRunner.Run> local = new ArrayList<>(first.queries.get(0).local);
    local.addAll(second.queries.get(0).local);
    assertEquals(local, q6.local);
    assertEquals(3, q6.gpudirect.size());
    double median = Medians.of(local.stream().map(TpchRunner.Run::wall).toList());
    assertEquals(median, merged.total(false), "the total: the median over all 3 rounds");
    assertEquals(1, q6.rows);
    assertEquals(List.of(), merged.differences());

    Path m = root.resolve("merged.json");
    TpchReport.write(merged, m);
    assertEquals(local, TpchReport.read(m).queries.get(0).local, "a merged file reads back");

    var twice = assertThrows(IllegalArgumentException.class, () -> TpchMerge.merge(List.of(a, m)));
    assertTrue(twice.getMessage().contains("are in " + a + " and again in " + m + ": name each run once"),
        twice.getMessage());
    Path otherScale = edited(a, "sf.json", "scaleFactor", 0.02);
    var scale = assertThrows(IllegalArgumentException.class, () -> TpchMerge.merge(List.of(a, otherScale)));
    assertEquals("Cannot merge the TPC-H runs of " + a + " and " + otherScale + ": their scaleFactor differs (0.01"
        + " against 0.02); only runs of the same scale factor, queries and settings merge", scale.getMessage());
    Path otherQueries = edited(b, "queries.json", "queries", List.of("q1"));
    var queries = assertThrows(IllegalArgumentException.class, () -> TpchMerge.merge(List.of(a, otherQueries)));
    assertTrue(queries.getMessage().contains("their queries differs ([q6] against [q1])"), queries.getMessage());
    Path otherMaster = edited(b, "master.json", "master", "local[*]");
    var master = assertThrows(IllegalArgumentException.class, () -> TpchMerge.merge(List.of(a, otherMaster)));
    assertTrue(master.getMessage().contains("their master differs (local[2] against local[*])"), master.getMessage());
    Path old = Files.writeString(root.resolve("old.json"), "{\"scaleFactor\" : 0.01, \"queries\" : []}");
    var unreadable = assertThrows(IllegalArgumentException.class, () -> TpchMerge.merge(List.of(a, old)));
    assertTrue(unreadable.getMessage().startsWith(old.toAbsolutePath() + " holds no TPC-H results with settings"),
        unreadable.getMessage());
    var none = assertThrows(IllegalArgumentException.class, () -> TpchMerge.files(" , "));
    assertTrue(none.getMessage().contains("names no result files"), none.getMessage());
  }

  /**
   * At SF 30, q8 and q9 take one of two plans on either side (a race inside adaptive execution):
   * the rounds in which the sides' shuffle bytes say their plans differed are named beside the
   * answers, and a result file keeps each run's bytes (one of before has none: not counted).
   */
  @Test
  void roundsInWhichTheSidesRanDifferentPlansAreNamed() throws IOException {
    TpchResults.QueryResult q8 = new TpchResults.QueryResult(TpchQueries.get(8));
    // 2026-12-06's sitting 2 and 3 at SF 30 (sums of the stages' shuffle writes; the two of sitting
    // 3 differ by bytes the GPU's partitioning moves from run to run), and a round without bytes.
    long[][] rounds = {{4_018_000_000L, 404_000_000L}, {4_018_000_000L, 4_018_000_197L}, {-1, 404_000_000L}};
    for (long[] r : rounds) {
      q8.local.add(new TpchRunner.Run(7.0, 90, 0, r[0], List.of()));
      q8.gpudirect.add(new TpchRunner.Run(4.4, 50, 1, r[1], List.of()));
    }
    q8.rows = 2;
    assertEquals(1, q8.plansDiffer());
    assertFalse(TpchResults.QueryResult.differentPlans(1L << 20, 3L << 20), "under 16 MiB apart: the same plan");
    TpchResults results = new TpchResults(TpchSettings.of(options, "local", "gpudirect"),
        List.of(new TpchResults.Launch("now", "q8.json", 3, 0, 0, 0)), List.of(q8));
    var printed = new java.io.ByteArrayOutputStream();
    TpchReport.print(results, new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));
    assertTrue(printed.toString(java.nio.charset.StandardCharsets.UTF_8)
        .contains("equal; plans differ in 1 of 3 rounds (shuffle bytes)"), printed.toString());

    Path file = root.resolve("q8.json");
    TpchReport.write(results, file);
    assertTrue(Files.readString(file).contains("\"plansDiffer\" : 1"));
    assertEquals(q8.local, TpchReport.read(file).queries.get(0).local, "each run's shuffle bytes read back");
    Path old = Files.writeString(root.resolve("q8-old.json"),
        Files.readString(file).replace("\"shuffle_write_bytes\"", "\"unknown\""));
    assertEquals(0, TpchReport.read(old).queries.get(0).plansDiffer(), "a file of before: no bytes, nothing counted");
  }

  /**
   * Sittings of one round each: q9 ran first on our side in all five of 2026-12-06's, since the
   * alternation started the same way in each; an even sitting starts the other way.
   */
  @Test
  void evenSittingsStartEachQueryWithTheOtherSide() {
    TpchOptions first = tiny("all", 1, 1, 0.01, "first.json");
    TpchOptions second = new TpchOptions(0.01, 1, 1, 0.01, TpchQueries.select("all"), root, false, "local[2]",
        root.resolve("second.json"), Optional.empty(), 2, Map.of(), Optional.empty());
    for (int query = 0; query < 22; query++) {
      assertNotEquals(first.localFirst(1, query), second.localFirst(1, query), "q" + (query + 1));
      assertNotEquals(first.localFirst(1, query), first.localFirst(2, query), "rounds alternate");
      assertNotEquals(first.localFirst(1, query), first.localFirst(1, query + 1), "queries alternate");
    }
    assertThrows(IllegalArgumentException.class, () -> new TpchOptions(0.01, 1, 1, 0.01, TpchQueries.select("all"),
        root, false, "local[2]", root.resolve("x.json"), Optional.empty(), 0, Map.of(), Optional.empty()));
  }

  /** SF 0.01 on the test's session, {@code queries} only. */
  private static TpchOptions tiny(String queries, int rounds, int warmups, double warmupScaleFactor, String out) {
    return new TpchOptions(0.01, rounds, warmups, warmupScaleFactor, TpchQueries.select(queries), root, false,
        "local[2]", root.resolve(out), Optional.empty(), 1, Map.of("spark.sql.shuffle.partitions", "4"), Optional.empty());
  }

  private static Path runAndWrite(TpchOptions o) throws Exception {
    TpchReport.write(TpchRunner.run(spark, o, r -> {}), o.resultFile());
    return o.resultFile();
  }

  /** A copy of the result file {@code from} whose setting {@code name} is {@code value}. */
  private static Path edited(Path from, String to, String name, Object value) throws IOException {
    ObjectMapper json = new ObjectMapper();
    ObjectNode tree = (ObjectNode) json.readTree(from.toFile());
    ((ObjectNode) tree.get("settings")).set(name, json.valueToTree(value));
    Path copy = root.resolve(to);
    json.writeValue(copy.toFile(), tree);
    return copy;
  }

  /** Spark names its files with a fresh UUID each time: the same names are the same files. */
  private static List<String> dataFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.map(Path::toString).filter(p -> p.endsWith(".parquet")).sorted().toList();
    }
  }
}
