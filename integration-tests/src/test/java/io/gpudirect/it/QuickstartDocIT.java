package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.hadoop.GpuDirectFileSystem;
import io.gpudirect.options.ExecutorSettings;
import io.gpudirect.options.GpuDirectOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.script.ScriptEngine;
import javax.script.ScriptEngineManager;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/quickstart.md: its Java snippet is this class's code and runs, its Scala snippet runs in Scala's interpreter; all name real options. */
class QuickstartDocIT {
  private static final Path DOC = Path.of("../docs/quickstart.md");
  private static final Path THIS_SOURCE = Path.of("src/test/java/io/gpudirect/it/QuickstartDocIT.java");
  /** Spark's own reader options the snippets use; every other option must be gpudirect's. */
  private static final Set<String> SPARK_READER_OPTIONS = Set.of("header");

  @TempDir
  Path data;

  /** The quickstart's Java snippet, verbatim between the markers; returns what it read. */
  static List<Dataset<Row>> javaQuickstart(String server, String secret) {
    // quickstart-java:begin
    // The secret goes in when the session starts, never through spark.conf().set (docs/security.md).
    SparkSession spark = SparkSession.builder()
        .config("spark.gpudirect.auth.secret", secret)
        .getOrCreate();

    // gpudirect's own source: pushdown, row-group pruning, scan metrics in the SQL tab.
    Dataset<Row> trips = spark.read().format("gpudirect")
        .option("streams", "4")
        .load("gpudirect://" + server + "/trips");
    Dataset<Row> byCategory = trips.where("fare > 10").groupBy("category").count();
    byCategory.show();

    // Spark's own readers on the same server, through the gpudirect:// Hadoop file system.
    Dataset<Row> zones = spark.read().option("header", "true").csv("gpudirect://" + server + "/zones/*.csv");
    Dataset<Row> events = spark.read().json("gpudirect://" + server + "/events");
    // quickstart-java:end
    return List.of(byCategory, zones, events);
  }

  @Test
  void javaSnippetIsThisTestsCode() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    String snippet = between(doc, "<!-- quickstart-java:begin -->\n```java\n", "```\n<!-- quickstart-java:end -->");
    String code = between(Files.readString(THIS_SOURCE, StandardCharsets.UTF_8),
        "// quickstart-java:begin\n", "    // quickstart-java:end");
    assertEquals(dedent(code), dedent(snippet), "docs/quickstart.md's Java snippet and " + THIS_SOURCE);
  }

  @Test
  void javaSnippetRunsAgainstARealServerWithASecret() throws Exception {
    SparkSession spark = LocalSpark.get();
    writeQuickstartData(spark);
    byte[] secret = "quickstart secret".getBytes(StandardCharsets.UTF_8);
    try (ServerFixture fixture = ServerFixture.serve(data, secret)) {
      // The test's session is running already: getOrCreate() returns it with the secret set.
      List<Dataset<Row>> read = javaQuickstart("127.0.0.1:" + fixture.server.port(),
          new String(secret, StandardCharsets.UTF_8));
      checkQuickstartReads(spark, read);
      assertTrue(fixture.server.stats().bytesSent() > 0);
    } finally {
      spark.conf().unset("spark.gpudirect.auth.secret");
    }
  }

  /**
   * The Scala snippet, verbatim, in Scala's own interpreter (what spark-shell runs) with the
   * live session bound as {@code spark}. Only the server address is put in; the secret, which
   * the snippet says to give at launch ({@code --conf spark.gpudirect.auth.secret=...}), is set
   * in the session's conf before it runs, as a launch would have.
   */
  @Test
  void scalaSnippetRunsInTheScalaInterpreter() throws Exception {
    SparkSession spark = LocalSpark.get();
    writeQuickstartData(spark);
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    String snippet = between(doc, "```scala\n", "```\n");
    assertTrue(snippet.contains("\"storage-host:7337\""), snippet);
    byte[] secret = "scala quickstart secret".getBytes(StandardCharsets.UTF_8);
    try (ServerFixture fixture = ServerFixture.serve(data, secret)) {
      ScriptEngine scala = new ScriptEngineManager().getEngineByName("scala");
      assertNotNull(scala, "Scala's JSR-223 engine (scala-compiler on the test classpath)");
      scala.put("session", spark);
      scala.eval("val spark = session.asInstanceOf[org.apache.spark.sql.SparkSession]");
      spark.conf().set("spark.gpudirect.auth.secret", new String(secret, StandardCharsets.UTF_8));
      scala.eval(snippet.replace("\"storage-host:7337\"", "\"127.0.0.1:" + fixture.server.port() + "\""));
      @SuppressWarnings("unchecked")
      List<Dataset<Row>> read = List.of(
          ((Dataset<Row>) scala.eval("trips")).where("fare > 10").groupBy("category").count(),
          (Dataset<Row>) scala.eval("zones"), (Dataset<Row>) scala.eval("events"));
      checkQuickstartReads(spark, read);
      assertTrue(fixture.server.stats().bytesSent() > 0);
    } finally {
      spark.conf().unset("spark.gpudirect.auth.secret");
    }
  }

  private void writeQuickstartData(SparkSession spark) {
    if (Files.exists(data.resolve("trips"))) {
      return;
    }
    spark.range(0, 5000, 1, 2).selectExpr("id", "concat('c', id % 5) AS category", "id * 0.01 AS fare")
        .write().parquet(data.resolve("trips").toString());
    spark.range(0, 40, 1, 2).selectExpr("id AS zone", "concat('zone ', id) AS name")
        .write().option("header", "true").csv(data.resolve("zones").toString());
    spark.range(0, 300, 1, 1).selectExpr("id", "named_struct('kind', concat('k', id % 3)) AS payload")
        .write().json(data.resolve("events").toString());
  }

  private void checkQuickstartReads(SparkSession spark, List<Dataset<Row>> read) {
    List<Row> expectedCounts = spark.read().parquet(data.resolve("trips").toString())
        .where("fare > 10").groupBy("category").count().orderBy("category").collectAsList();
    assertEquals(5, expectedCounts.size());
    assertEquals(expectedCounts, read.get(0).orderBy("category").collectAsList());
    assertEquals(spark.read().option("header", "true").csv(data.resolve("zones") + "/*.csv")
        .orderBy("zone").collectAsList(), read.get(1).orderBy("zone").collectAsList());
    assertEquals(spark.read().json(data.resolve("events").toString()).orderBy("id").collectAsList(),
        read.get(2).orderBy("id").collectAsList());
  }

  /** The PySpark snippet is not run (no Python Spark here); at least every name it uses must exist. */
  @Test
  void everyOptionAndKeyInTheQuickstartExists() throws Exception {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    Set<String> optionKeys = Arrays.stream(GpuDirectOption.values()).map(GpuDirectOption::key).collect(Collectors.toSet());
    Set<String> sessionKeys = Stream.concat(Arrays.stream(GpuDirectOption.values()).map(GpuDirectOption::sessionKey),
        ExecutorSettings.sessionKeys().stream()).collect(Collectors.toSet());
    List<String> options = all(doc, "\\.option\\(\"([^\"]+)\"");
    assertTrue(options.size() >= 6, "options found: " + options);
    for (String o : options) {
      assertTrue(optionKeys.contains(o) || SPARK_READER_OPTIONS.contains(o), "unknown option '" + o + "' in " + DOC);
    }
    List<String> keys = all(doc, "(spark\\.gpudirect\\.[A-Za-z.]+[A-Za-z])");
    assertFalse(keys.isEmpty());
    for (String k : keys) {
      assertTrue(sessionKeys.contains(k), "unknown session key '" + k + "' in " + DOC);
    }
    for (String impl : all(doc, "spark\\.hadoop\\.fs\\.gpudirect\\.impl=(\\S+)")) {
      assertEquals(GpuDirectFileSystem.class.getName(), impl);
    }
    // The connector builds -shaded.jar for Spark 3.5 (default) and -shaded-spark4.jar under -Pspark4.
    String spark35Jar = Path.of(System.getProperty("gpudirect.shadedJar")).getFileName().toString()
        .replace("-shaded-spark4.jar", "-shaded.jar");
    Set<String> shadedJars = Set.of(spark35Jar, spark35Jar.replace("-shaded.jar", "-shaded-spark4.jar"));
    for (String jar : all(doc, "(gpudirect-connector-[^\\s,]+\\.jar)")) {
      assertTrue(shadedJars.contains(jar), "the jar the connector module builds: " + jar + " is not one of " + shadedJars);
    }
    // Each command runs from the checkout, where section 1 built the jar.
    List<String> jarArgs = all(doc, "--jars (\\S+)");
    assertTrue(jarArgs.size() >= 4, "--jars found: " + jarArgs);
    for (String jar : jarArgs) {
      assertTrue(jar.startsWith("connector/target/"), "--jars " + jar + ": the path section 1 builds");
    }
    assertTrue(doc.contains("format(\"gpudirect\")"));
  }

  /** What README and the quickstart say the shaded jar holds is what it holds, and nothing it does not. */
  @Test
  void theDocsSayWhatTheShadedJarHolds() throws Exception {
    TreeSet<String> bundled;
    try (JarFile jar = new JarFile(SparkSubmitProcess.shadedJar().toFile())) {
      bundled = BundledArtifacts.inJar(jar);
    }
    for (Path doc : List.of(DOC, Path.of("../README.md"))) {
      String text = Files.readString(doc, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
      String said = between(text, "The shaded jar holds ", ";");
      for (String name : BundledArtifacts.docNames(bundled)) {
        assertTrue(said.contains(name), doc + " leaves " + name + " out of the shaded jar: " + said);
      }
      if (bundled.stream().noneMatch(c -> c.endsWith(":picocli"))) {
        assertFalse(said.contains("command-line parser"), doc + ": the jar holds no command-line parser: " + said);
      }
    }
  }

  private static List<String> all(String text, String regex) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile(regex).matcher(text);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  private static String between(String text, String begin, String end) {
    int b = text.indexOf(begin);
    assertTrue(b >= 0, "missing marker " + begin);
    int e = text.indexOf(end, b + begin.length());
    assertTrue(e >= 0, "missing marker " + end);
    return text.substring(b + begin.length(), e);
  }

  /** Without the common indentation and trailing blanks, so a method body and a doc block compare. */
  private static String dedent(String block) {
    List<String> lines = block.lines().map(String::stripTrailing).toList();
    int indent = lines.stream().filter(l -> !l.isEmpty()).mapToInt(l -> l.length() - l.stripLeading().length())
        .min().orElse(0);
    return lines.stream().map(l -> l.isEmpty() ? l : l.substring(indent)).collect(Collectors.joining("\n")).strip();
  }
}
