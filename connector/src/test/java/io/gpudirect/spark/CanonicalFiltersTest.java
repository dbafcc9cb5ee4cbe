package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.junit.jupiter.api.Test;

/**
 * Two scans are reused for each other only when their filters are the same up to order: the
 * same read written another way is equal, and filters that differ never are (a reuse of an
 * unequal scan would give wrong rows).
 */
class CanonicalFiltersTest {
  private static final Filter A1 = new EqualTo("a", 1);
  private static final Filter B2 = new GreaterThan("b", 2);

  @Test
  void theOrderTheQueryWroteDoesNotMatter() {
    assertEquals(of(A1, B2), of(B2, A1));
    assertEquals(of(new Or(A1, B2)), of(new Or(B2, A1)));
    assertEquals(of(new And(new And(A1, B2), new IsNotNull("c"))), of(new And(new IsNotNull("c"), new And(B2, A1))));
    assertEquals(of(new Not(new In("a", new Object[] {1, 2, null}))), of(new Not(new In("a", new Object[] {null, 2, 1}))));
  }

  @Test
  void differentFiltersAreNeverEqual() {
    assertNotEquals(of(A1), of(A1, B2));
    assertNotEquals(of(A1, A1), of(A1));
    assertNotEquals(of(new And(A1, B2)), of(new Or(A1, B2)));
    assertNotEquals(of(new Not(A1)), of(A1));
    assertNotEquals(of(new In("a", new Object[] {1, 2})), of(new In("a", new Object[] {1, 3})));
    // Names and values that print alike: filters are compared by value, never by their text.
    assertNotEquals(of(new EqualTo("a,b", "c")), of(new EqualTo("a", "b,c")));
    assertNotEquals(of(new In("a", new Object[] {"x, y"})), of(new In("a", new Object[] {"x", "y"})));
  }

  private static Object of(Filter... filters) {
    return CanonicalFilters.of(filters);
  }
}
