package io.gpudirect.spark;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;

/**
 * Pushed filters in a form that does not depend on the order the query wrote them in, as Spark
 * canonicalizes a file scan's filters before it compares two scans: the top-level filters, the
 * operands of AND and OR and the values of IN each as a multiset. So {@code a = 1 OR a = 2} and
 * {@code a = 2 OR a = 1} (TPC-H's q7 reads its nations so) are the same read. Built of the
 * filters' own values and equality, never of their text, so that two different filters never
 * compare equal (a column named {@code "a,b"} prints like two).
 */
final class CanonicalFilters {
  private CanonicalFilters() {}

  /** A value equal to {@code of(other)} exactly when the filters are the same up to order. */
  static Object of(Filter[] filters) {
    Map<Object, Integer> set = new HashMap<>();
    for (Filter f : filters) {
      set.merge(canonical(f), 1, Integer::sum);
    }
    return set;
  }

  private static Object canonical(Filter f) {
    if (f instanceof And || f instanceof Or) {
      Map<Object, Integer> operands = new HashMap<>();
      flatten(f, f.getClass(), operands);
      return new Junction(f.getClass(), operands);
    }
    if (f instanceof Not not) {
      return new Negation(canonical(not.child()));
    }
    if (f instanceof In in) {
      Map<Object, Integer> values = new HashMap<>();
      for (Object v : in.values()) {
        values.merge(v, 1, Integer::sum);
      }
      return new Membership(in.attribute(), values);
    }
    return f; // Spark's filters are case classes: equal by attribute and value
  }

  /** The operands of nested ANDs (or ORs) of one kind, canonical. */
  private static void flatten(Filter f, Class<?> kind, Map<Object, Integer> operands) {
    if (kind.isInstance(f)) {
      flatten(f instanceof And and ? and.left() : ((Or) f).left(), kind, operands);
      flatten(f instanceof And and ? and.right() : ((Or) f).right(), kind, operands);
    } else {
      operands.merge(canonical(f), 1, Integer::sum);
    }
  }

  private record Junction(Class<?> kind, Map<Object, Integer> operands) {}

  private record Negation(Object operand) {}

  private record Membership(String attribute, Map<Object, Integer> values) {}
}
