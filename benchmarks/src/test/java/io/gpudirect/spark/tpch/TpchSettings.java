package io.gpudirect.spark.tpch;

import io.gpudirect.spark.rapids.RapidsSessions;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What a TPC-H run's times depend on, as its result file records them: only runs whose settings
 * are all equal may have their rounds merged ({@link TpchMerge}). The machine enters as its cores
 * and Java; the plugin as its version, as the running JVM found it.
 *
 * @param spark the Spark settings given to the run ({@code -Dspark.*} and the options' own), secrets hidden
 * @param serverCpus the CPUs the server process was pinned to; null where it was not
 */
record TpchSettings(double scaleFactor, List<String> queries, String master, int cores, String java, String rapids,
    String reference, String measured, int warmups, double warmupScaleFactor, SortedMap<String, String> spark,
    String serverCpus) {

  /** Spark's own default for {@code spark.redaction.regex}: such values stay out of result files. */
  private static final Pattern SECRET = Pattern.compile("(?i)secret|password|token|access[.]?key");

  static TpchSettings of(TpchOptions o, String reference, String measured) {
    SortedMap<String, String> spark = new TreeMap<>();
    o.sparkConf().forEach((k, v) -> spark.put(k, SECRET.matcher(k).find() ? "(redacted)" : v));
    return new TpchSettings(o.scaleFactor(), o.queries().stream().map(TpchQueries.Query::name).toList(), o.master(),
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        o.rapids() ? "RAPIDS Accelerator " + RapidsSessions.pluginVersion().orElse("?") : "no RAPIDS Accelerator",
        reference, measured, o.warmups(), o.warmupScaleFactor(), spark, o.serverCpus().orElse(null));
  }

  /** "1 warm-up pass at SF 1 (its own tables)", or "no warm-up". */
  String warmup() {
    if (warmups == 0) {
      return "no warm-up";
    }
    return warmups + " warm-up pass" + (warmups == 1 ? "" : "es") + " at SF " + TpchDataset.scaleName(warmupScaleFactor)
        + (warmupScaleFactor == scaleFactor ? "" : " (its own tables)");
  }
}
