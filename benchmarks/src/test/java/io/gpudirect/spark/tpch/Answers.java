package io.gpudirect.spark.tpch;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.spark.sql.Row;

/**
 * Whether two answers to one query are the same: the same rows, in the same order where the query
 * has an ORDER BY (a tie could reorder rows only in q3, q5, q10, q11 and q18, whose orders begin with a sum
 * of money and do not end in a unique key), in any order otherwise;
 * decimals exactly, scale included (Spark's decimal sums and averages do not depend on the order
 * of addition); doubles to a relative {@value #DOUBLE_TOLERANCE}, since a double sum does depend on
 * it, and the two sides split the files, so the partial sums, differently.
 */
final class Answers {
  static final double DOUBLE_TOLERANCE = 1e-9;

  private Answers() {}

  /** The first difference of {@code other} from {@code reference}, in words; empty when none. */
  static Optional<String> difference(List<Row> reference, List<Row> other, boolean ordered) {
    if (reference.size() != other.size()) {
      return Optional.of(other.size() + " rows where the reference has " + reference.size());
    }
    if (!ordered) {
      reference = reference.stream().sorted(Comparator.comparing(Row::toString)).toList();
      other = other.stream().sorted(Comparator.comparing(Row::toString)).toList();
    }
    for (int r = 0; r < reference.size(); r++) {
      Row want = reference.get(r);
      Row got = other.get(r);
      if (want.length() != got.length()) {
        return Optional.of("row " + r + " has " + got.length() + " columns where the reference has " + want.length());
      }
      for (int c = 0; c < want.length(); c++) {
        if (!same(want.get(c), got.get(c))) {
          return Optional.of("row " + r + ", column " + name(want, c) + ": " + got.get(c)
              + " where the reference has " + want.get(c) + " (reference row " + want + ")");
        }
      }
    }
    return Optional.empty();
  }

  private static boolean same(Object want, Object got) {
    if (want instanceof Double || want instanceof Float) {
      if (!(got instanceof Double || got instanceof Float)) {
        return false;
      }
      double a = ((Number) want).doubleValue();
      double b = ((Number) got).doubleValue();
      return a == b || Double.isNaN(a) && Double.isNaN(b)
          || Math.abs(a - b) <= DOUBLE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
    }
    if (want instanceof BigDecimal) {
      return want.equals(got); // BigDecimal.equals compares the scale too
    }
    return Objects.equals(want, got);
  }

  private static String name(Row row, int column) {
    return row.schema() != null ? row.schema().fields()[column].name() : String.valueOf(column);
  }
}
