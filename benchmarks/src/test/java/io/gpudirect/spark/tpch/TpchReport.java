package io.gpudirect.spark.tpch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A TPC-H run's table for people (medians per query, ratio, total) and its file for programs
 * (JSON), which {@link #read} reads back for {@link TpchMerge}: the settings, the launches whose
 * rounds these are, and per query every timed run of each side.
 */
final class TpchReport {
  private static final ObjectMapper JSON = new ObjectMapper();

  private TpchReport() {}

  static void print(TpchResults r, PrintStream out) {
    TpchSettings s = r.settings;
    out.printf("%nTPC-H SF %s, %s, %s%s; medians of %d round(s); wall s, and CPU s of this JVM + the server's%n",
        TpchDataset.scaleName(s.scaleFactor()), s.master(), s.rapids(),
        s.serverCpus() == null ? "" : ", the server on CPUs " + s.serverCpus(), r.rounds());
    for (TpchResults.Launch l : r.launches) {
      out.printf("  %s (%s): %d timed round%s%s%n", l.date(), l.file(), l.rounds(), l.rounds() == 1 ? "" : "s",
          s.warmups() == 0 ? ", no warm-up" : String.format(" after %s: %.1f s and %.1f s, %d rows", s.warmup(),
              l.warmupReferenceSeconds(), l.warmupMeasuredSeconds(), l.warmupRows()));
    }
    out.printf("%-5s %8s %22s %22s %7s  %s%n", "query", "rows", s.reference(), s.measured(), "ratio", "answers");
    for (TpchResults.QueryResult q : r.queries) {
      out.printf("%-5s %8d %8.2f (%5.1f+%4.1f) %8.2f (%5.1f+%4.1f) %7.2f  %s%n", q.query.name(), q.rows,
          TpchResults.median(q.local, TpchRunner.Run::wall), TpchResults.median(q.local, TpchRunner.Run::cpu),
          TpchResults.median(q.local, TpchRunner.Run::serverCpu),
          TpchResults.median(q.gpudirect, TpchRunner.Run::wall), TpchResults.median(q.gpudirect, TpchRunner.Run::cpu),
          TpchResults.median(q.gpudirect, TpchRunner.Run::serverCpu),
          q.ratio(), (q.difference == null ? "equal" : "DIFFERENT: " + q.difference) + plans(q));
    }
    out.printf("%-5s %8s %8.2f %22.2f %7.2f  %d of %d equal%n", "total", "", r.total(false), r.total(true),
        r.total(true) / r.total(false), r.queries.size() - r.differences().size(), r.queries.size());
  }

  /** Where the sides' plans differed, said beside the answers: those rounds' ratios compare plans. */
  private static String plans(TpchResults.QueryResult q) {
    int differ = q.plansDiffer();
    return differ == 0 ? "" : String.format("; plans differ in %d of %d rounds (shuffle bytes)", differ, q.local.size());
  }

  static void write(TpchResults r, Path file) {
    ObjectNode root = JSON.createObjectNode();
    root.set("settings", JSON.valueToTree(r.settings));
    root.put("rounds", r.rounds()).put("warmedUp", r.settings.warmup());
    root.set("launches", JSON.valueToTree(r.launches));
    var queries = root.putArray("queries");
    for (TpchResults.QueryResult q : r.queries) {
      ObjectNode n = queries.addObject().put("query", q.query.name()).put("rows", q.rows)
          .put("equal", q.difference == null).put("difference", q.difference).put("ratio", q.ratio())
          .put("plansDiffer", q.plansDiffer());
      side(n.putObject("reference"), q.local);
      side(n.putObject("measured"), q.gpudirect);
    }
    root.putObject("total").put("reference_s", r.total(false)).put("measured_s", r.total(true))
        .put("ratio", r.total(true) / r.total(false));
    try {
      JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the TPC-H results to " + file.toAbsolutePath()
          + " (-Dgpudirect.tpch.out names another file)", e);
    }
  }

  private static void side(ObjectNode n, List<TpchRunner.Run> runs) {
    n.put("median_s", TpchResults.median(runs, TpchRunner.Run::wall))
        .put("cpu_s", TpchResults.median(runs, TpchRunner.Run::cpu))
        .put("server_cpu_s", TpchResults.median(runs, TpchRunner.Run::serverCpu));
    var each = n.putArray("runs");
    runs.forEach(run -> each.addObject().put("wall_s", run.wall()).put("cpu_s", run.cpu())
        .put("server_cpu_s", run.serverCpu()).put("shuffle_write_bytes", run.shuffleBytes()));
  }

  /** The results that {@link #write} wrote to {@code file}; the runs without their rows. */
  static TpchResults read(Path file) {
    JsonNode root;
    try {
      root = JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the TPC-H results in " + file.toAbsolutePath() + ": " + e.getMessage(), e);
    }
    if (root == null || !root.has("settings") || !root.has("launches") || !root.has("queries")) {
      throw new IllegalArgumentException(file.toAbsolutePath() + " holds no TPC-H results with settings, launches and"
          + " queries (the runner wrote no settings before it could merge runs: run again)");
    }
    try {
      List<TpchResults.QueryResult> queries = new ArrayList<>();
      for (JsonNode n : root.get("queries")) {
        var q = new TpchResults.QueryResult(TpchQueries.get(Integer.parseInt(n.get("query").asText().substring(1))));
        q.rows = n.get("rows").asInt();
        q.difference = n.get("difference").isNull() ? null : n.get("difference").asText();
        runs(n.get("reference"), q.local);
        runs(n.get("measured"), q.gpudirect);
        queries.add(q);
      }
      return new TpchResults(JSON.treeToValue(root.get("settings"), TpchSettings.class),
          List.of(JSON.treeToValue(root.get("launches"), TpchResults.Launch[].class)), queries);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("Cannot read the TPC-H results in " + file.toAbsolutePath() + ": " + e, e);
    }
  }

  private static void runs(JsonNode side, List<TpchRunner.Run> into) {
    for (JsonNode run : side.get("runs")) {
      // Files of before 2026-12-06 have no shuffle bytes: -1, not counted by plansDiffer.
      into.add(new TpchRunner.Run(run.get("wall_s").asDouble(), run.get("cpu_s").asDouble(),
          run.get("server_cpu_s").asDouble(), run.path("shuffle_write_bytes").asLong(-1), List.of()));
    }
  }
}
