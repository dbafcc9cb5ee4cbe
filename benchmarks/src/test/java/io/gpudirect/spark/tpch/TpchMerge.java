package io.gpudirect.spark.tpch;

import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Several TPC-H runs of one scale factor, queries and settings, each its own result file, as one
 * run: per query the timed runs of all of them, so that the medians and the total are over every
 * round. What a command of limited time cannot hold (3 rounds of SF 30 on the GPU lab) is measured
 * in several, on the same machine and tables. Runs of other settings, or the same run twice, are
 * refused: their rounds would not be samples of one thing.
 */
final class TpchMerge {
  private TpchMerge() {}

  /** {@code spec}: result files separated by commas, as {@code -Dgpudirect.tpch.merge} gives them. */
  static List<Path> files(String spec) {
    List<Path> files = new ArrayList<>();
    for (String f : spec.split(",")) {
      if (!f.isBlank()) {
        files.add(Path.of(f.trim()));
      }
    }
    if (files.isEmpty()) {
      throw new IllegalArgumentException("gpudirect.tpch.merge='" + spec + "' names no result files: give them as"
          + " a.json,b.json (the -Dgpudirect.tpch.out of each run)");
    }
    return files;
  }

  static TpchResults merge(List<Path> files) {
    Path firstFile = files.get(0);
    TpchResults first = TpchReport.read(firstFile);
    List<TpchResults.Launch> launches = new ArrayList<>();
    Map<String, Path> launchedIn = new HashMap<>();
    List<TpchResults.QueryResult> merged = new ArrayList<>();
    for (TpchResults.QueryResult q : first.queries) {
      TpchResults.QueryResult m = new TpchResults.QueryResult(q.query);
      m.rows = q.rows;
      merged.add(m);
    }
    for (Path file : files) {
      TpchResults r = file == firstFile ? first : TpchReport.read(file);
      sameSettings(first.settings, firstFile, r.settings, file);
      for (TpchResults.Launch l : r.launches) {
        Path earlier = launchedIn.putIfAbsent(l.date(), file);
        if (earlier != null) {
          throw new IllegalArgumentException("The rounds of the run of " + l.date() + " are in " + earlier + " and again"
              + " in " + file + ": name each run once");
        }
        launches.add(l);
      }
      for (int i = 0; i < merged.size(); i++) {
        TpchResults.QueryResult m = merged.get(i);
        TpchResults.QueryResult q = r.queries.get(i);
        if (q.rows != m.rows) {
          throw new IllegalArgumentException(q.query.name() + " answered " + m.rows + " rows in " + firstFile + " and "
              + q.rows + " in " + file + ", with the same settings: were the tables made again in between? Not merged");
        }
        m.local.addAll(q.local);
        m.gpudirect.addAll(q.gpudirect);
        if (m.difference == null && q.difference != null) {
          m.difference = "in " + file + ", " + q.difference;
        }
      }
    }
    return new TpchResults(first.settings, launches, merged);
  }

  private static void sameSettings(TpchSettings a, Path aFile, TpchSettings b, Path bFile) {
    for (RecordComponent c : TpchSettings.class.getRecordComponents()) {
      Object av = value(c, a);
      Object bv = value(c, b);
      if (!Objects.equals(av, bv)) {
        throw new IllegalArgumentException("Cannot merge the TPC-H runs of " + aFile + " and " + bFile + ": their "
            + c.getName() + " differs (" + av + " against " + bv + "); only runs of the same scale factor, queries and"
            + " settings merge");
      }
    }
  }

  private static Object value(RecordComponent c, TpchSettings s) {
    try {
      return c.getAccessor().invoke(s);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot read " + c.getName() + " of " + s, e);
    }
  }
}
