package io.gpudirect.spark.tpch;

import io.gpudirect.testing.Medians;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/** What a TPC-H run measured: per query, the timed runs of each side and the first difference. */
final class TpchResults {
  final TpchOptions options;
  final String localName;
  final String gpudirectName;
  final List<QueryResult> queries;

  TpchResults(TpchOptions options, String localName, String gpudirectName, List<QueryResult> queries) {
    this.options = options;
    this.localName = localName;
    this.gpudirectName = gpudirectName;
    this.queries = queries;
  }

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
  }

  static double median(List<TpchRunner.Run> runs, ToDoubleFunction<TpchRunner.Run> figure) {
    return Medians.of(runs.stream().mapToDouble(figure).toArray());
  }

  /** The sum over the queries of each one's median wall time on one side. */
  double total(boolean gpudirect) {
    return queries.stream().mapToDouble(q -> median(gpudirect ? q.gpudirect : q.local, TpchRunner.Run::wall)).sum();
  }

  List<String> differences() {
    return queries.stream().filter(q -> q.difference != null).map(q -> q.query.name() + ": " + q.difference).toList();
  }
}
