package io.gpudirect.spark.tpch;

import io.gpudirect.spark.rapids.RapidsSessions;
import io.gpudirect.spark.tpch.TpchQueries.Query;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What one TPC-H run does. From system properties ({@link #fromSystemProperties}), each with its
 * default: {@code gpudirect.tpch.sf} (1), {@code .rounds} (3, timed), {@code .warmups} (1, untimed,
 * checked), {@code .warmupSf} (the scale factor of the warm-up passes, on tables of their own: the
 * main one), {@code .queries} ("all", or such as "1,3,18-22"), {@code .data} (the cache of generated
 * tables, {@code java.io.tmpdir}/gpudirect-tpch), {@code .rapids} ("auto": the RAPIDS Accelerator
 * when its jar is on the class path; "off"), {@code .master} ("local[*]"), {@code .out} (the
 * result file, tpch-sf&lt;SF&gt;.json), {@code .profile} (a folder: per query, side and timed round, such as
 * q9-local-r2.txt, its stages and final plan with its SQL metrics; none when unset), {@code .sitting} (1: which
 * of several sittings this is, below), {@code .serverCpus} (the CPUs the server process runs on,
 * such as "2,3": a storage host's cores of its own, where the JVM of Spark runs under {@code taskset}
 * on others; unset, wherever the system puts it). Spark settings come as {@code -Dspark.*}.
 *
 * <p>A scale factor too large for one sitting (SF 30 on the GPU lab, whose commands end after 10
 * minutes) runs in several, on a machine that stays up between them: the tables are made once and
 * reused ({@link TpchDataset}), each sitting warms up at a small {@code warmupSf} and times a round
 * or two, and {@link TpchMerge} joins their result files; docs/benchmarks.md ("TPC-H") gives the commands.
 * Each sitting says which it is: an even one starts each query with the other side than an odd one
 * does, so that over the sittings a query's first run (which pays for what the last query left,
 * such as its shuffle files' writeback) falls to each side alike.
 *
 * @param sparkConf settings over the session's defaults: the {@code -Dspark.*} given, so that the
 *     result file records them ({@link TpchSettings})
 */
record TpchOptions(double scaleFactor, int rounds, int warmups, double warmupScaleFactor, List<Query> queries,
    Path dataDir, boolean rapids, String master, Path resultFile, Optional<Path> profileDir, int sitting,
    Map<String, String> sparkConf, Optional<String> serverCpus) {
  private static final Pattern CPU_LIST = Pattern.compile("\\d+(-\\d+)?(,\\d+(-\\d+)?)*");

  TpchOptions {
    if (rounds < 1 || warmups < 0) {
      throw new IllegalArgumentException("TPC-H rounds " + rounds + " and warm-ups " + warmups
          + ": at least one timed round (gpudirect.tpch.rounds), and no negative warm-ups (gpudirect.tpch.warmups)");
    }
    if (sitting < 1) {
      throw new IllegalArgumentException("gpudirect.tpch.sitting=" + sitting + ": 1 for the first sitting, 2 for the second, ...");
    }
    if (!(warmupScaleFactor > 0)) {
      throw new IllegalArgumentException("gpudirect.tpch.warmupSf=" + warmupScaleFactor + ": a scale factor above 0");
    }
    if (serverCpus.isPresent() && !CPU_LIST.matcher(serverCpus.get()).matches()) {
      throw new IllegalArgumentException("gpudirect.tpch.serverCpus=" + serverCpus.get() + ": a list of CPUs such as 2,3 or 4-7");
    }
    if (warmups == 0 && warmupScaleFactor != scaleFactor) {
      throw new IllegalArgumentException("gpudirect.tpch.warmupSf=" + TpchDataset.scaleName(warmupScaleFactor)
          + " with gpudirect.tpch.warmups=0: nothing would warm up at it; set warmups to 1 or more, or leave warmupSf out");
    }
  }

  static TpchOptions fromSystemProperties() {
    double sf = number("gpudirect.tpch.sf", "1");
    String rapids = System.getProperty("gpudirect.tpch.rapids", "auto");
    if (!rapids.equals("auto") && !rapids.equals("off")) {
      throw new IllegalArgumentException("gpudirect.tpch.rapids=" + rapids + ": auto (the plugin when its jar is on the"
          + " class path) or off");
    }
    Map<String, String> spark = new TreeMap<>();
    System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("spark."))
        .forEach(k -> spark.put(k, System.getProperty(k)));
    return new TpchOptions(sf,
        whole(number("gpudirect.tpch.rounds", "3"), "gpudirect.tpch.rounds"),
        whole(number("gpudirect.tpch.warmups", "1"), "gpudirect.tpch.warmups"),
        number("gpudirect.tpch.warmupSf", Double.toString(sf)),
        TpchQueries.select(System.getProperty("gpudirect.tpch.queries", "all")),
        Path.of(System.getProperty("gpudirect.tpch.data", Path.of(System.getProperty("java.io.tmpdir"), "gpudirect-tpch").toString())),
        rapids.equals("auto") && RapidsSessions.pluginVersion().isPresent(),
        System.getProperty("gpudirect.tpch.master", "local[*]"),
        Path.of(System.getProperty("gpudirect.tpch.out", "tpch-sf" + TpchDataset.scaleName(sf) + ".json")),
        Optional.ofNullable(System.getProperty("gpudirect.tpch.profile")).map(Path::of),
        whole(number("gpudirect.tpch.sitting", "1"), "gpudirect.tpch.sitting"),
        spark,
        Optional.ofNullable(System.getProperty("gpudirect.tpch.serverCpus")));
  }

  private static int whole(double value, String property) {
    if (value != Math.rint(value)) {
      throw new IllegalArgumentException(property + "=" + value + ": a whole number");
    }
    return (int) value;
  }

  /**
   * Whether {@code query} (its index among the run's) runs first on the reference's side in
   * {@code round}: alternating from query to query and round to round, and the other way in an even
   * sitting.
   */
  boolean localFirst(int round, int query) {
    return (round + query + sitting - 1) % 2 == 0;
  }

  private static double number(String property, String otherwise) {
    String value = System.getProperty(property, otherwise);
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(property + "=" + value + ": not a number", e);
    }
  }
}
