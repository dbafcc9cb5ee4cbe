package io.gpudirect.spark.rapids;

import io.gpudirect.bench.Cpu;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.Medians;
import io.gpudirect.testing.TestClassPath;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Issue 15's benchmark: a multi-GB Parquet dataset and a scan + filter + aggregate with the
 * RAPIDS Accelerator, three ways, interleaved round by round:
 * <ol>
 *   <li>the plugin's reader on the local files;</li>
 *   <li>the plugin's reader over {@code gpudirect://} (its multithreaded reader, with
 *       {@code gpudirect} among its cloud schemes, as the quickstart advises);</li>
 *   <li>{@code format("gpudirect")} with the device pass-through.</li>
 * </ol>
 * Wall time per query, the CPU seconds of this JVM (driver and executors: Spark local mode)
 * and of the server, which runs in a JVM of its own as a storage host would. The three
 * results must agree. Not a test: run by hand on the GPU machine with the plugin staged
 * (dev/gpu-lab-rapids, which stages the benchmarks module's test classes too), through the
 * JUnit launcher, whose class loader the plugin's shims need: {@code
 * JAVA_OPTS="-Dgpudirect.bench.rapids=ROWS_MILLIONS,ROUNDS ..." run.sh junit --select-method
 * io.gpudirect.spark.rapids.RapidsScanBenchmark#run}; figures go to docs/benchmarks.md. (Maven's
 * test runs never pick it: its name does not end in Test.) It sits in the package of the
 * plugin's adapter ({@code RapidsPlugin}), in the benchmarks module's test sources.
 */
public final class RapidsScanBenchmark {
  @org.junit.jupiter.api.Test
  void run() throws Exception {
    String spec = System.getProperty("gpudirect.bench.rapids");
    org.junit.jupiter.api.Assumptions.assumeTrue(spec != null, "a benchmark: run with -Dgpudirect.bench.rapids=ROWS_MILLIONS,ROUNDS");
    main(spec.split(","));
  }

  private static final String QUERY = "SELECT pmod(day, 7) AS weekday, count(*) AS n, sum(amount) AS total,"
      + " max(customer) AS top FROM %s WHERE amount > 0.25 GROUP BY pmod(day, 7) ORDER BY weekday";

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("serve")) {
      serve(Path.of(args[1]));
      return;
    }
    long rows = (args.length > 0 ? Long.parseLong(args[0]) : 200) * 1_000_000L;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Path dir = Files.createTempDirectory("gpudirect-rapids-bench");
    boolean plugin = RapidsSessions.pluginVersion().isPresent();
    if (!plugin) {
      System.out.println("the RAPIDS Accelerator is not on the class path: a dry run on the CPU, not a measurement");
    }
    SparkSession spark = RapidsSessions.configure(SparkSession.builder(), plugin)
        .appName("gpudirect-rapids-scan-benchmark").master("local[16]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    Process server = null;
    try {
      long t0 = System.nanoTime();
      spark.range(0, rows, 1, 32).selectExpr(
              "id",
              "cast(pmod(hash(id), 1000000) AS INT) AS customer",
              "rand(7) AS amount",
              "cast(id % 3650 AS INT) AS day")
          .write().parquet(dir.resolve("trips").toString());
      long bytes;
      try (Stream<Path> files = Files.walk(dir.resolve("trips"))) {
        bytes = files.filter(p -> p.toString().endsWith(".parquet")).mapToLong(p -> p.toFile().length()).sum();
      }
      System.out.printf("dataset: %,d rows, %.2f GB of Parquet in %s, written in %.0f s%n",
          rows, bytes / 1e9, dir.resolve("trips"), (System.nanoTime() - t0) / 1e9);

      server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-cp", TestClassPath.of(RapidsScanBenchmark.class), RapidsScanBenchmark.class.getName(), "serve", dir.toString())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      if (line == null || !line.startsWith("port ")) {
        throw new IllegalStateException("the server process did not start: " + line);
      }
      String remote = "gpudirect://127.0.0.1:" + line.substring(5).trim() + "/trips";

      Way[] ways = {
          new Way("plugin's reader, local files", () -> spark.read().parquet(dir.resolve("trips").toString())),
          new Way("plugin's reader over gpudirect://", () -> spark.read().parquet(remote)),
          new Way("format(\"gpudirect\"), pass-through", () -> spark.read().format("gpudirect").load(remote)),
      };
      List<String> first = null;
      for (Way w : ways) { // one untimed query each: JIT, plugin start-up, page cache
        List<String> r = w.run(spark, server);
        System.out.printf("warm-up %-38s %.2f s%n", w.name, w.walls.get(0));
        w.walls.clear();
        w.cpus.clear();
        w.serverCpus.clear();
        if (first == null) {
          first = r;
          System.out.println("result: " + r);
        } else if (!first.equals(r)) {
          throw new IllegalStateException(w.name + " gave " + r + ", where the local reader gave " + first);
        }
        System.out.println(w.plan);
      }
      for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < ways.length; i++) {
          Way w = ways[(i + round) % ways.length]; // each round starts with another way
          if (!first.equals(w.run(spark, server))) {
            throw new IllegalStateException(w.name + " gave other rows in round " + round);
          }
        }
      }
      System.out.printf("%n%-38s %9s %12s %12s %9s %9s%n", "way (median of " + rounds + ")", "wall s",
          "client CPU s", "server CPU s", "wall/(1)", "wall/(2)");
      for (Way w : ways) {
        System.out.printf("%-38s %9.2f %12.1f %12.1f %9.2f %9.2f%n", w.name, Medians.of(w.walls), Medians.of(w.cpus),
            Medians.of(w.serverCpus), Medians.of(w.walls) / Medians.of(ways[0].walls), Medians.of(w.walls) / Medians.of(ways[1].walls));
      }
    } finally {
      if (server != null) {
        server.getOutputStream().close();
        server.waitFor();
      }
      spark.stop();
      RemoteStores.closeAll();
    }
  }

  /** The storage side, in its own JVM: serves {@code root} until its standard input closes. */
  private static void serve(Path root) throws Exception {
    try (BlockServer server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).build().start()) {
      System.out.println("port " + server.port());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the benchmark to close our input
      }
    }
  }

  private interface Source {
    Dataset<Row> get();
  }

  private static final class Way {
    final String name;
    final Source source;
    final List<Double> walls = new ArrayList<>();
    final List<Double> cpus = new ArrayList<>();
    final List<Double> serverCpus = new ArrayList<>();
    String plan;

    Way(String name, Source source) {
      this.name = name;
      this.source = source;
    }

    List<String> run(SparkSession spark, Process server) {
      source.get().createOrReplaceTempView("t");
      Dataset<Row> q = spark.sql(String.format(QUERY, "t"));
      long cpu = Cpu.processNanos();
      long serverCpu = Cpu.processNanos(server.toHandle());
      long start = System.nanoTime();
      List<Row> rows = q.collectAsList();
      walls.add((System.nanoTime() - start) / 1e9);
      cpus.add((Cpu.processNanos() - cpu) / 1e9);
      serverCpus.add((Cpu.processNanos(server.toHandle()) - serverCpu) / 1e9);
      plan = name + ":\n" + q.queryExecution().executedPlan().treeString();
      List<String> s = new ArrayList<>();
      for (Row r : rows) {
        // The sum of doubles depends on the order of addition: compared to 9 digits.
        s.add(r.get(0) + "|" + r.get(1) + "|" + String.format("%.9e", r.getDouble(2)) + "|" + r.get(3));
      }
      return s;
    }
  }

}
