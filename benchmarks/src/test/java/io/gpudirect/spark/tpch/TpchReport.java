package io.gpudirect.spark.tpch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpudirect.spark.rapids.RapidsSessions;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/** A TPC-H run's table for people (medians per query, ratio, total) and its file for programs (JSON). */
final class TpchReport {
  private TpchReport() {}

  static void print(TpchResults r, PrintStream out) {
    TpchOptions o = r.options;
    out.printf("%nTPC-H SF %s, %s, %s; medians of %d rounds (after %d warm-up); wall s, and CPU s of this JVM"
        + " + the server's%n", TpchDataset.scaleName(o.scaleFactor()), o.master(), plugin(o), o.rounds(), o.warmups());
    out.printf("%-5s %8s %22s %22s %7s  %s%n", "query", "rows", r.localName, r.gpudirectName, "ratio", "answers");
    for (TpchResults.QueryResult q : r.queries) {
      out.printf("%-5s %8d %8.2f (%5.1f+%4.1f) %8.2f (%5.1f+%4.1f) %7.2f  %s%n", q.query.name(), q.rows,
          TpchResults.median(q.local, TpchRunner.Run::wall), TpchResults.median(q.local, TpchRunner.Run::cpu),
          TpchResults.median(q.local, TpchRunner.Run::serverCpu),
          TpchResults.median(q.gpudirect, TpchRunner.Run::wall), TpchResults.median(q.gpudirect, TpchRunner.Run::cpu),
          TpchResults.median(q.gpudirect, TpchRunner.Run::serverCpu),
          q.ratio(), q.difference == null ? "equal" : "DIFFERENT: " + q.difference);
    }
    out.printf("%-5s %8s %8.2f %22.2f %7.2f  %d of %d equal%n", "total", "", r.total(false), r.total(true),
        r.total(true) / r.total(false), r.queries.size() - r.differences().size(), r.queries.size());
  }

  static void write(TpchResults r, Path file) {
    TpchOptions o = r.options;
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode()
        .put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
        .put("scaleFactor", o.scaleFactor())
        .put("master", o.master())
        .put("cores", Runtime.getRuntime().availableProcessors())
        .put("java", System.getProperty("java.version"))
        .put("rapids", plugin(o))
        .put("rounds", o.rounds())
        .put("warmups", o.warmups())
        .put("reference", r.localName)
        .put("measured", r.gpudirectName);
    var queries = root.putArray("queries");
    for (TpchResults.QueryResult q : r.queries) {
      ObjectNode n = queries.addObject().put("query", q.query.name()).put("rows", q.rows)
          .put("equal", q.difference == null).put("difference", q.difference).put("ratio", q.ratio());
      side(n.putObject("reference"), q.local);
      side(n.putObject("measured"), q.gpudirect);
    }
    root.putObject("total").put("reference_s", r.total(false)).put("measured_s", r.total(true))
        .put("ratio", r.total(true) / r.total(false));
    try {
      json.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the TPC-H results to " + file.toAbsolutePath()
          + " (-Dgpudirect.tpch.out names another file)", e);
    }
  }

  private static void side(ObjectNode n, List<TpchRunner.Run> runs) {
    n.put("median_s", TpchResults.median(runs, TpchRunner.Run::wall))
        .put("cpu_s", TpchResults.median(runs, TpchRunner.Run::cpu))
        .put("server_cpu_s", TpchResults.median(runs, TpchRunner.Run::serverCpu));
    var walls = n.putArray("runs_s");
    runs.forEach(run -> walls.add(run.wall()));
  }

  private static String plugin(TpchOptions o) {
    return o.rapids() ? "RAPIDS Accelerator " + RapidsSessions.pluginVersion().orElse("?") : "no RAPIDS Accelerator";
  }
}
