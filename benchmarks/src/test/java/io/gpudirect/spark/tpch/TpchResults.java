package io.gpudirect.spark.tpch;

import io.gpudirect.testing.Medians;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * What a TPC-H run measured, or several runs of the same settings merged: per query, the timed
 * runs of each side and the first difference; and the launches (JVMs) whose rounds these are.
 */
final class TpchResults {
  final TpchSettings settings;
  final List<Launch> launches;
  final List<QueryResult> queries;

  TpchResults(TpchSettings settings, List<Launch> launches, List<QueryResult> queries) {
    this.settings = settings;
    this.launches = launches;
    this.queries = queries;
  }

  /**
   * One launch of the runner: when it started, the result file it wrote, its timed rounds, and
   * what its warm-up passes (at {@link TpchSettings#warmupScaleFactor}) took on each side, with
   * the rows of their answers.
   */
  record Launch(String date, String file, int rounds, double warmupReferenceSeconds, double warmupMeasuredSeconds,
      long warmupRows) {}

  /** One query's timed runs on each side, its answer's size, and the first difference. */
  static final class QueryResult {
    final TpchQueries.Query query;
    final List<TpchRunner.Run> local = new ArrayList<>();
    final List<TpchRunner.Run> gpudirect = new ArrayList<>();
    int rows;
    /** The first difference of the gpudirect side's answer from the reference's; null when none. */
    String difference;

    QueryResult(TpchQueries.Query query) {
      this.query = query;
    }

    double ratio() {
      return median(gpudirect, TpchRunner.Run::wall) / median(local, TpchRunner.Run::wall);
    }

    /**
     * The rounds in which the two sides ran different plans, told by the shuffle bytes they wrote
     * (half as much again, and 16 MiB more, on one side): there the ratio compares plans, not reads.
     * Rounds whose runs did not record their shuffle bytes are not counted.
     */
    int plansDiffer() {
      int differ = 0;
      for (int k = 0; k < Math.min(local.size(), gpudirect.size()); k++) {
        if (differentPlans(local.get(k).shuffleBytes(), gpudirect.get(k).shuffleBytes())) {
          differ++;
        }
      }
      return differ;
    }

    static boolean differentPlans(long a, long b) {
      long less = Math.min(a, b);
      long more = Math.max(a, b);
      return less >= 0 && more - less > (16L << 20) && more > less * 3 / 2;
    }
  }

  static double median(List<TpchRunner.Run> runs, ToDoubleFunction<TpchRunner.Run> figure) {
    return Medians.of(runs.stream().mapToDouble(figure).toArray());
  }

  /** The timed rounds of all launches. */
  int rounds() {
    return launches.stream().mapToInt(Launch::rounds).sum();
  }

  /** The sum over the queries of each one's median wall time on one side. */
  double total(boolean gpudirect) {
    return queries.stream().mapToDouble(q -> median(gpudirect ? q.gpudirect : q.local, TpchRunner.Run::wall)).sum();
  }

  List<String> differences() {
    return queries.stream().filter(q -> q.difference != null).map(q -> q.query.name() + ": " + q.difference).toList();
  }
}
