package io.gpudirect.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code gpudirect bench} with tiny sizes: every part really runs (real server on loopback,
 * real sockets, Flight, the child JVM, local Spark) and every figure it reports must be a
 * positive number. Not a performance check: on a shared CI machine only the shape is stable.
 * On the Spark 3.5 line only: the bench ships in that build ({@code bin/gpudirect}), and the
 * connector's reads and shuffle that it times run on Spark 4 through the connector's and
 * integration-tests' own tests.
 */
@Tag("spark35-line")
class BenchSmokeTest {
  private static final String[] TINY = {"--duration", "0.3", "--rounds", "1", "--size", "8m",
      "--arrow-size", "2m", "--memory-size", "96m", "--spark-rows", "20000", "--join-rows", "20000", "--join-pairs", "1", "--no-progress"};

  private static String run(String... extra) {
    List<String> args = new ArrayList<>(List.of(TINY));
    args.addAll(List.of(extra));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int code = cli.execute(args.toArray(new String[0]));
    assertEquals(0, code, () -> "bench failed: " + err);
    return out.toString();
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void jsonHasEveryPartWithPositiveFigures() throws Exception {
    JsonNode report = new ObjectMapper().readTree(run("--json", "--raw"));
    assertTrue(report.get("machine").asText().contains("cores"), report.toString());
    List<String> sections = new ArrayList<>();
    for (JsonNode row : report.get("rows")) {
      String name = row.get("section").asText() + ": " + row.get("name").asText();
      sections.add(row.get("section").asText());
      boolean latency = row.get("section").asText().equals("latency");
      if (latency) {
        assertPositive(row, "p50_us", name);
        assertPositive(row, "p99_us", name);
        assertTrue(row.get("p99_us").asDouble() >= row.get("p50_us").asDouble(), name);
      } else {
        assertPositive(row, "gbit_per_s", name);
        if (!row.get("section").asText().equals("memory")) {
          assertPositive(row, "cpu_s_per_gb", name);
        }
      }
      if (!row.get("target").isNull()) {
        assertNotNull(row.get("met").isBoolean() ? row.get("met") : null, name + " has a target but no verdict");
        if (!row.get("section").asText().equals("memory")) {
          assertPositive(row, "ratio", name);
        }
      }
    }
    for (String s : List.of("fetch", "latency", "flight", "spark", "joins", "memory")) {
      assertTrue(sections.contains(s), "no " + s + " rows in " + report);
    }
    // The raw-socket fallback is the wire reference when asked for (and when iperf3 is absent).
    assertTrue(report.get("rows").get(0).get("reference").asText().startsWith("raw socket"), report.toString());
    // The memory part read the whole file in the -Xmx512m child and stayed inside its limits.
    for (JsonNode row : report.get("rows")) {
      if (row.get("section").asText().equals("memory")) {
        assertTrue(row.get("met").asBoolean(), row.toString());
      }
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void tableHasOneHeaderAndALinePerMeasurement() {
    String table = run("--sections", "fetch,latency");
    List<String> lines = table.lines().filter(l -> !l.startsWith("#") && !l.startsWith("    ")).toList();
    assertTrue(lines.get(0).startsWith("measurement") && lines.get(0).contains("CPU s/GB")
        && lines.get(0).contains("p99 us") && lines.get(0).contains("ratio"), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("fetch: ours, 1 stream ")), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("fetch: ours, 4 streams ")), table);
    // The reference that keeps its bytes in as much memory as ours, beside the one that discards them.
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("fetch: raw socket (sendfile), 4 streams, keeping its bytes ")), table);
    assertTrue(table.contains("against the raw socket keeping its bytes in as much memory as ours: "), table);
    // And the references that also check CRC32C of every buffer, as our client checks each chunk's.
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("fetch: raw socket (sendfile), 1 stream, keeping its bytes, checking CRC32C ")), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("fetch: raw socket (sendfile), 4 streams, keeping its bytes, checking CRC32C ")), table);
    assertTrue(table.contains("against the raw socket keeping its bytes and checking CRC32C: ") && table.contains("against that raw socket checking CRC32C: "), table);
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("latency: ours, 4 KiB")), table);
    assertTrue(table.contains("# date: ") && table.contains("# method: "), table);
  }

  /** A cluster and three applications: a minute of CI's time. */
  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shuffleSectionRunsEachShuffleOnTwoExecutors() throws Exception {
    JsonNode report = new ObjectMapper().readTree(run("--json", "--sections", "shuffle", "--shuffle-size", "4m",
        "--shuffle-rounds", "1", "--shuffle-variant", "spark.gpudirect.shuffle.decodeThreads=2"));
    List<String> names = new ArrayList<>();
    for (JsonNode row : report.get("rows")) {
      String name = row.get("section").asText() + ": " + row.get("name").asText();
      names.add(name);
      assertPositive(row, "gbit_per_s", name);
      assertPositive(row, "cpu_s_per_gb", name);
    }
    assertEquals(List.of("shuffle: gpudirect shuffle, join", "shuffle: Spark's Netty shuffle, join",
        "shuffle: gpudirect shuffle with {spark.gpudirect.shuffle.decodeThreads=2}, join"), names);
    JsonNode variant = report.get("rows").get(2);
    assertPositive(variant, "ratio", "the variant against ours");
    assertTrue(variant.get("met").isNull() && variant.get("note").asText().contains("reduce stages"), variant.toString());
    JsonNode ours = report.get("rows").get(0);
    assertPositive(ours, "ratio", "ours against Spark's");
    assertTrue(ours.get("met").isBoolean() && ours.get("note").asText().contains("fetch wait"), ours.toString());
    // The job's two phases, from the stages' own times, and each phase's tasks' run and CPU times
    // and the map tasks' shuffle write time: none may be missing (zero) on either side.
    String tasks = "its tasks ran ([0-9.]+) s: their threads' CPU ([0-9.]+) s, GC [0-9.]+ s, ";
    String mapTasks = tasks + "shuffle write ([0-9.]+) s";
    String reduceTasks = tasks + "fetch wait [0-9.]+ s";
    java.util.regex.Matcher phases = java.util.regex.Pattern
        .compile("map phase ([0-9.]+) vs ([0-9.]+) s \\(" + mapTasks + " vs " + mapTasks + "\\), reduce stages ([0-9.]+) vs"
            + " ([0-9.]+) s \\(" + reduceTasks + " vs " + reduceTasks + "\\)")
        .matcher(ours.get("note").asText());
    assertTrue(phases.find(), ours.get("note").asText());
    for (int g = 1; g <= 14; g++) {
      assertTrue(Double.parseDouble(phases.group(g)) > 0, "figure " + g + " in " + phases.group());
    }
  }

  @Test
  void badArgumentsSayWhatWasWrong() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setErr(new PrintWriter(err, true));
    cli.setOut(new PrintWriter(new StringWriter(), true));
    assertEquals(2, cli.execute("--duration", "0"));
    assertTrue(err.toString().contains("--duration"), err.toString());
    assertEquals(2, cli.execute("--sections", "shuffle", "--shuffle-worker", " "));
    assertTrue(err.toString().contains("--shuffle-worker must start with the Worker's address"), err.toString());
    assertEquals(2, cli.execute("--sections", "shuffle", "--shuffle-rapids-manager",
        "com.nvidia.spark.rapids.spark353.RapidsShuffleManager"));
    assertTrue(err.toString().contains("add --shuffle-conf spark.plugins=com.nvidia.spark.SQLPlugin"), err.toString());
    assertEquals(2, cli.execute("--sections", "shuffle", "--shuffle-variant", "spark.sql.shuffle.partitions=8"));
    assertTrue(err.toString().contains("--shuffle-variant takes gpudirect's shuffle settings"), err.toString());
  }

  private static void assertPositive(JsonNode row, String field, String name) {
    JsonNode v = row.get(field);
    assertTrue(v != null && v.isNumber() && v.asDouble() > 0, name + ": " + field + " = " + v);
  }
}
