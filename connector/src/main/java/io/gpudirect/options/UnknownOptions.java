package io.gpudirect.options;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns about option keys gpudirect does not know, once per key and JVM, naming the closest
 * option: Spark hands a source every key it is given, so {@code tranport=rdma} would otherwise
 * be ignored and the read would run, silently, with the default.
 *
 * <p>Not warned about: the keys Spark itself adds ({@code path}, {@code paths}), and read
 * options that look like Hadoop or Parquet settings ({@code parquet.block.size}): the source
 * passes read options on to Hadoop's conf, as Spark's file sources do.
 */
public final class UnknownOptions {
  private static final Logger LOG = LoggerFactory.getLogger(UnknownOptions.class);
  private static final String SESSION_PREFIX = GpuDirectOption.SESSION_PREFIX;
  /** What {@code DataFrameReader.load} and SQL's {@code OPTIONS (path ...)} add to the options. */
  private static final Set<String> SPARK_KEYS = Set.of("path", "paths");
  /** Our own dotted keys start with these; other dotted keys are taken for Hadoop settings. */
  private static final Set<String> OWN_NAMESPACES = Set.of("auth", "tls");
  /** Farther than this from every option, a dotted key is a Hadoop setting, not a typo. */
  private static final int TYPO_DISTANCE = 2;
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  private UnknownOptions() {}

  /** Warns about the read options (given to {@code .option()}) that no option takes. */
  public static List<String> checkReadOptions(Collection<String> keys) {
    List<String> warnings = new ArrayList<>();
    for (String key : keys) {
      String k = key.toLowerCase(Locale.ROOT);
      if (GpuDirectOption.forKey(k) != null || SPARK_KEYS.contains(k)) {
        continue;
      }
      // Given as pinnedChunks or as its conf key: either way a read cannot change it.
      String executorSetting = ExecutorSettings.named(k.startsWith(SESSION_PREFIX) ? k.substring(SESSION_PREFIX.length()) : k);
      if (executorSetting != null) {
        warn(warnings, "read option '" + key + "' is an executor setting, which one read cannot change:"
            + " give it as " + SESSION_PREFIX + executorSetting + " in the Spark conf (ignored as given)");
        continue;
      }
      if (k.startsWith(SESSION_PREFIX)) {
        GpuDirectOption o = GpuDirectOption.forKey(k.substring(SESSION_PREFIX.length()));
        if (o != null) {
          warn(warnings, "read option '" + key + "' is a session conf key; as a read option it is"
              + " '" + o.key() + "' (ignored as given)");
          continue;
        }
      }
      GpuDirectOption closest = closest(k);
      int distance = distance(k, closest.key().toLowerCase(Locale.ROOT));
      int dot = k.indexOf('.');
      if (dot > 0 && !OWN_NAMESPACES.contains(k.substring(0, dot)) && distance > TYPO_DISTANCE) {
        continue;
      }
      warn(warnings, "Unknown gpudirect option '" + key + "' is ignored; " + suggestion(closest, distance, ""));
    }
    return warnings;
  }

  /** Warns about the keys under {@code spark.gpudirect.} (session, Spark or Hadoop conf) that no option takes. */
  public static List<String> checkSessionKeys(Collection<String> keys) {
    List<String> warnings = new ArrayList<>();
    for (String key : keys) {
      if (!key.regionMatches(true, 0, SESSION_PREFIX, 0, SESSION_PREFIX.length())) {
        continue;
      }
      String k = key.substring(SESSION_PREFIX.length()).toLowerCase(Locale.ROOT);
      // The shuffle manager's settings (spark.gpudirect.shuffle.*) are its own to check, not a read's.
      if (GpuDirectOption.forKey(k) != null || ExecutorSettings.named(k) != null || k.startsWith("shuffle.")) {
        continue;
      }
      GpuDirectOption closest = closest(k);
      warn(warnings, "Unknown gpudirect setting '" + key + "' is ignored; "
          + suggestion(closest, distance(k, closest.key().toLowerCase(Locale.ROOT)), SESSION_PREFIX));
    }
    return warnings;
  }

  private static String suggestion(GpuDirectOption closest, int distance, String prefix) {
    if (distance <= Math.max(TYPO_DISTANCE, closest.key().length() / 3)) {
      return "did you mean '" + prefix + closest.key() + "'?";
    }
    StringBuilder all = new StringBuilder();
    for (GpuDirectOption o : GpuDirectOption.values()) {
      all.append(all.length() == 0 ? "" : ", ").append(o.key());
    }
    return "the closest option is '" + prefix + closest.key() + "'; the options are " + all
        + " (docs/configuration.md)";
  }

  private static void warn(List<String> warnings, String warning) {
    warnings.add(warning);
    if (WARNED.add(warning)) {
      LOG.warn(warning);
    }
  }

  private static GpuDirectOption closest(String key) {
    GpuDirectOption best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (GpuDirectOption o : GpuDirectOption.values()) {
      int d = distance(key, o.key().toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = o;
        bestDistance = d;
      }
    }
    return best;
  }

  /** Levenshtein distance: insertions, deletions and substitutions each count one. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitute, Math.min(prev[j], cur[j - 1]) + 1);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
