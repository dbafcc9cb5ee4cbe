package io.gpudirect.spark.tpch;

import io.gpudirect.bench.Cpu;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.spark.rapids.RapidsSessions;
import io.gpudirect.spark.tpch.TpchQueries.Query;
import io.gpudirect.testing.ServerProcess;
import io.trino.tpch.TpchTable;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs TPC-H queries two ways in one local Spark, alternated: {@code spark.read.parquet} of the
 * local files (the reference) and {@code format("gpudirect")} of the same files from a block
 * server on loopback, which runs in a JVM of its own as a storage host would. Each way has its own
 * session of the one SparkContext, whose temporary views give the queries' table names to its
 * reads. Within a round, each query runs on both sides back to back, the side that goes first
 * changing from query to query and from round to round. Every answer of the gpudirect side is
 * compared with the reference's of the same round.
 */
final class TpchRunner {
  private TpchRunner() {}

  /**
   * One way of reading the tables: its name, its short name for files, the session whose temporary
   * views read them so, and how it reads a table (a folder of the data root, such as sf10/lineitem).
   */
  private record Side(String name, String key, SparkSession session, BiFunction<SparkSession, String, Dataset<Row>> read) {
    /** Points the queries' table names at the tables of {@code scale} (a folder of the data root, such as sf10). */
    void use(Path scale) {
      for (TpchTable<?> t : TpchTable.getTables()) {
        read.apply(session, scale.getFileName() + "/" + t.getTableName()).createOrReplaceTempView(t.getTableName());
      }
    }
  }

  /** The local Spark of a run: {@code o}'s master, the plugin if asked for, and {@code o.sparkConf()}. */
  static SparkSession session(TpchOptions o) {
    SparkSession.Builder builder = SparkSession.builder().appName("gpudirect-tpch").master(o.master())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", o.dataDir().resolve("spark-warehouse").toString())
        // Room for every class the 22 queries generate, both sides': with Spark's 100 the cache
        // evicted them between rounds, so whichever side ran a query first in a round compiled
        // its code again and the other reused it (the first 1.07x slower on average on 2 cores,
        // q1 1.3-2.1x; 1.03x with room), and an odd number of rounds charged that to one side.
        .config("spark.sql.codegen.cache.maxEntries", "2000");
    if (o.rapids()) {
      RapidsSessions.configure(builder, true);
    }
    o.sparkConf().forEach(builder::config);
    SparkSession spark = builder.getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    return spark;
  }

  /**
   * Makes or reuses the tables (the warm-up's too, at its own scale factor), starts the server,
   * and runs {@code o}'s rounds in {@code spark}. The server serves the data root, so that the
   * warm-up passes also warm up its JVM, which then serves the timed rounds' tables. After each
   * timed round, {@code eachRound} gets the results so far (to be used before it returns: the
   * lists grow), so that a run stopped short, as a command that runs out of time is, can keep the
   * rounds it finished.
   */
  static TpchResults run(SparkSession spark, TpchOptions o, Consumer<TpchResults> eachRound) throws Exception {
    String date = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    Path data = TpchDataset.at(spark, o.scaleFactor(), o.dataDir());
    Path warmupData = o.warmups() == 0 || o.warmupScaleFactor() == o.scaleFactor() ? data
        : TpchDataset.at(spark, o.warmupScaleFactor(), o.dataDir());
    try (ServerProcess.Running server = ServerProcess.start(TpchRunner.class, o.serverCpus(), o.dataDir().toString())) {
      String remote = "gpudirect://127.0.0.1:" + server.port() + "/";
      Side local = new Side("spark.read.parquet", "local", spark.newSession(),
          (s, table) -> s.read().parquet(o.dataDir().resolve(table).toString()));
      Side gpudirect = new Side("format(\"gpudirect\")", "gpudirect", spark.newSession(),
          (s, table) -> s.read().format("gpudirect").load(remote + table));
      return rounds(o, date, warmupData, data, local, gpudirect, server.process().handle(), eachRound);
    } finally {
      RemoteStores.closeAll();
    }
  }

  private static TpchResults rounds(TpchOptions o, String date, Path warmupData, Path data, Side local, Side gpudirect,
      ProcessHandle server, Consumer<TpchResults> eachRound) {
    TpchSettings settings = TpchSettings.of(o, local.name, gpudirect.name);
    List<TpchResults.QueryResult> results = new ArrayList<>();
    for (Query q : o.queries()) {
      results.add(new TpchResults.QueryResult(q));
    }
    double warmupLocal = 0;
    double warmupGpudirect = 0;
    long warmupRows = 0;
    TpchResults soFar = null; // there is at least one timed round
    for (int round = 0; round < o.warmups() + o.rounds(); round++) {
      boolean timed = round >= o.warmups();
      if (round == 0 || round == o.warmups()) {
        local.use(timed ? data : warmupData);
        gpudirect.use(timed ? data : warmupData);
      }
      for (int i = 0; i < results.size(); i++) {
        TpchResults.QueryResult result = results.get(i);
        boolean localFirst = o.localFirst(round, i);
        // Every timed round's plans and metrics, when a profile is asked for: at SF 30 some
        // queries take one of two plans' times on either side, and a round of each is needed.
        String file = result.query.name() + "-%s-r" + (round - o.warmups() + 1) + ".txt";
        Optional<Path> profile = timed ? o.profileDir() : Optional.empty();
        Side first = localFirst ? local : gpudirect;
        Side second = localFirst ? gpudirect : local;
        Run a = run(first, result.query, server, profile.map(d -> d.resolve(file.formatted(first.key))));
        Run b = run(second, result.query, server, profile.map(d -> d.resolve(file.formatted(second.key))));
        Run ofLocal = localFirst ? a : b;
        Run ofGpudirect = localFirst ? b : a;
        if (timed) {
          result.local.add(ofLocal);
          result.gpudirect.add(ofGpudirect);
          result.rows = ofLocal.rows.size();
        } else {
          warmupLocal += ofLocal.wall;
          warmupGpudirect += ofGpudirect.wall;
          warmupRows += ofLocal.rows.size();
        }
        String pass = timed ? "" : " (warm-up at SF " + TpchDataset.scaleName(o.warmupScaleFactor()) + ")";
        Optional<String> difference = Answers.difference(ofLocal.rows, ofGpudirect.rows, result.query.ordered());
        if (difference.isPresent() && result.difference == null) {
          result.difference = "round " + round + pass + ": " + difference.get();
        }
        System.out.printf("%s round %d%s: %s %.2f s, %s %.2f s, %d rows%s%n", result.query.name(), round, pass,
            local.name, ofLocal.wall, gpudirect.name, ofGpudirect.wall, ofLocal.rows.size(),
            difference.map(d -> ", DIFFERENT: " + d).orElse(""));
      }
      if (timed) {
        TpchResults.Launch launch = new TpchResults.Launch(date, o.resultFile().toString(), round - o.warmups() + 1,
            warmupLocal, warmupGpudirect, warmupRows);
        soFar = new TpchResults(settings, List.of(launch), results);
        eachRound.accept(soFar);
      }
    }
    return soFar;
  }

  /**
   * One query on one side: wall time, this JVM's CPU (driver and executors) and the server's, the
   * shuffle bytes its stages wrote (-1: not recorded, in result files of before 2026-12-06), and
   * no rows when read from a result file. The shuffle bytes say which plan ran: at SF 30, q8 and
   * q9 take one of two plans on either side, by a race inside adaptive execution, and the long one
   * shuffles all of lineitem (3.6-5.0 GB against 0.4).
   */
  record Run(double wall, double cpu, double serverCpu, long shuffleBytes, List<Row> rows) {}

  private static Run run(Side side, Query q, ProcessHandle server, Optional<Path> profile) {
    // Always heard, for the shuffle bytes that tell which plan adaptive execution chose (see Run);
    // made before the clocks start, since it reads the host's counters in /proc.
    QueryTimeline timeline = new QueryTimeline();
    side.session.sparkContext().addSparkListener(timeline);
    long cpu = Cpu.processNanos();
    long serverCpu = Cpu.processNanos(server);
    long start = System.nanoTime();
    Dataset<Row> query = side.session.sql(q.sql());
    List<Row> rows;
    try {
      rows = query.collectAsList();
    } catch (RuntimeException e) {
      throw new IllegalStateException("TPC-H " + q.name() + " failed on " + side.name + ": " + e.getMessage(), e);
    }
    double wall = (System.nanoTime() - start) / 1e9;
    double cpuSeconds = (Cpu.processNanos() - cpu) / 1e9;
    double serverSeconds = (Cpu.processNanos(server) - serverCpu) / 1e9;
    timeline.queryEnded();
    // Untimed: Spark removes a finished query's shuffle files only when a collection finds them
    // unreachable, so one JVM running the 22 queries at SF 30 kept them all and ran out of the
    // lab's 64 GiB disk. Removing them directly raced with map tasks of stages that adaptive
    // execution had cancelled (a map output registered for a shuffle already gone stops Spark's
    // scheduler); a collection leaves that to Spark's cleaner, which only sees unreachable ones.
    System.gc();
    writeBackPageCache();
    try {
      // The listener bus delivers the last stages' completions after collect() returns.
      side.session.sparkContext().listenerBus().waitUntilEmpty(60_000);
      if (profile.isPresent()) {
        TpchProfile.write(query, timeline, profile.get());
      }
    } catch (java.io.IOException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("TPC-H " + q.name() + "'s profile or shuffle bytes on " + side.name
          + " not heard: " + e, e);
    } finally {
      side.session.sparkContext().removeSparkListener(timeline);
    }
    return new Run(wall, cpuSeconds, serverSeconds, timeline.shuffleWritten(), rows);
  }

  /**
   * Untimed, between runs: the page cache's dirty pages (a run's shuffle files, up to 5 GB for
   * q9 at SF 30) written back, so that the next run, the other side's, does not pay for them.
   * Where there is no {@code sync} command, nothing.
   */
  private static void writeBackPageCache() {
    try {
      Process sync = new ProcessBuilder("sync").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!sync.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)) {
        sync.destroy();
      }
    } catch (java.io.IOException e) {
      // not a Unix host
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
