package io.gpudirect.spark.tpch;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * The 22 TPC-H queries as Spark's own tests publish them ({@code tpch/q1.sql} .. {@code q22.sql}
 * in the spark-sql tests jar, copied into this module's test classes by the build: see its pom),
 * with dbgen's default substitutions.
 */
final class TpchQueries {
  static final int COUNT = 22;
  private static final Pattern ORDER_BY = Pattern.compile("\\border\\s+by\\b", Pattern.CASE_INSENSITIVE);

  private TpchQueries() {}

  /** A query's number and text; {@code ordered} when its rows come in an order it names. */
  record Query(int number, String sql, boolean ordered) {
    String name() {
      return "q" + number;
    }
  }

  static Query get(int number) {
    String resource = "/tpch/q" + number + ".sql";
    try (InputStream in = TpchQueries.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("No TPC-H query " + resource + " on the class path: the build copies them from"
            + " Spark's tests jar into the benchmarks module's test classes (mvn -pl benchmarks test-compile)");
      }
      String sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new Query(number, sql, ORDER_BY.matcher(sql).find());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the TPC-H query " + resource, e);
    }
  }

  /** {@code spec}: "all", or numbers and ranges such as "1,3,18-22". */
  static List<Query> select(String spec) {
    List<Integer> numbers = new ArrayList<>();
    if (spec.isBlank() || spec.equals("all")) {
      IntStream.rangeClosed(1, COUNT).forEach(numbers::add);
    } else {
      for (String item : spec.split(",")) {
        String[] range = item.trim().replaceFirst("^[qQ]", "").split("-");
        try {
          int from = Integer.parseInt(range[0].trim());
          int to = range.length > 1 ? Integer.parseInt(range[1].trim().replaceFirst("^[qQ]", "")) : from;
          if (range.length > 2 || from < 1 || to > COUNT || from > to) {
            throw new NumberFormatException();
          }
          IntStream.rangeClosed(from, to).forEach(numbers::add);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("TPC-H queries '" + spec + "': '" + item.trim()
              + "' is not a query from 1 to " + COUNT + " or a range of them such as 18-22");
        }
      }
    }
    return numbers.stream().distinct().map(TpchQueries::get).toList();
  }
}
