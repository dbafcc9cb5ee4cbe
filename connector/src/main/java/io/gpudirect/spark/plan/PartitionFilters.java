package io.gpudirect.spark.plan;

import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.sources.AlwaysFalse;
import org.apache.spark.sql.sources.AlwaysTrue;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Partition pruning: whether a file whose directory gives {@code values} can hold a row that
 * passes the query's filters. Only filters on partition columns alone are judged; anything this
 * cannot decide keeps the file (Spark evaluates every filter again on the rows read), so a file
 * is left out only where a filter is certainly false or null for its directory.
 */
public final class PartitionFilters {
  /** SQL's three values, and UNKNOWN for what is not judged here. */
  private enum Truth { TRUE, FALSE, NULL, UNKNOWN }

  private PartitionFilters() {}

  /** The filters that name partition columns only: those pruning can decide. */
  public static boolean onPartitionColumnsOnly(Filter f, StructType columns, boolean caseSensitive) {
    String[] refs = f.references();
    if (refs.length == 0) {
      return false;
    }
    for (String r : refs) {
      if (DirectoryPartitioning.find(columns, r, caseSensitive) == null) {
        return false;
      }
    }
    return true;
  }

  public static boolean mayMatch(Filter[] filters, StructType columns, InternalRow values, boolean caseSensitive) {
    for (Filter f : filters) {
      if (!onPartitionColumnsOnly(f, columns, caseSensitive)) {
        continue;
      }
      Truth t = eval(f, columns, values, caseSensitive);
      if (t == Truth.FALSE || t == Truth.NULL) {
        return false;
      }
    }
    return true;
  }

  private static Truth eval(Filter f, StructType c, InternalRow v, boolean cs) {
    if (f instanceof And a) {
      return and(eval(a.left(), c, v, cs), eval(a.right(), c, v, cs));
    } else if (f instanceof Or o) {
      return or(eval(o.left(), c, v, cs), eval(o.right(), c, v, cs));
    } else if (f instanceof Not n) {
      Truth t = eval(n.child(), c, v, cs);
      return t == Truth.TRUE ? Truth.FALSE : t == Truth.FALSE ? Truth.TRUE : t;
    } else if (f instanceof AlwaysTrue) {
      return Truth.TRUE;
    } else if (f instanceof AlwaysFalse) {
      return Truth.FALSE;
    } else if (f instanceof IsNull n) {
      Object x = value(n.attribute(), c, v, cs);
      return x == UNRESOLVED ? Truth.UNKNOWN : x == null ? Truth.TRUE : Truth.FALSE;
    } else if (f instanceof IsNotNull n) {
      Object x = value(n.attribute(), c, v, cs);
      return x == UNRESOLVED ? Truth.UNKNOWN : x != null ? Truth.TRUE : Truth.FALSE;
    } else if (f instanceof EqualTo e) {
      return compare(e.attribute(), e.value(), c, v, cs, r -> r == 0);
    } else if (f instanceof EqualNullSafe e) {
      Object x = value(e.attribute(), c, v, cs);
      if (x == UNRESOLVED) {
        return Truth.UNKNOWN;
      }
      if (x == null || e.value() == null) {
        return x == null && e.value() == null ? Truth.TRUE : Truth.FALSE;
      }
      return compare(e.attribute(), e.value(), c, v, cs, r -> r == 0);
    } else if (f instanceof GreaterThan g) {
      return compare(g.attribute(), g.value(), c, v, cs, r -> r > 0);
    } else if (f instanceof GreaterThanOrEqual g) {
      return compare(g.attribute(), g.value(), c, v, cs, r -> r >= 0);
    } else if (f instanceof LessThan l) {
      return compare(l.attribute(), l.value(), c, v, cs, r -> r < 0);
    } else if (f instanceof LessThanOrEqual l) {
      return compare(l.attribute(), l.value(), c, v, cs, r -> r <= 0);
    } else if (f instanceof In in) {
      Truth any = Truth.FALSE;
      for (Object option : in.values()) {
        any = or(any, compare(in.attribute(), option, c, v, cs, r -> r == 0));
      }
      return any;
    } else if (f instanceof StringStartsWith s) {
      return strings(s.attribute(), c, v, cs, x -> x.startsWith(s.value()));
    } else if (f instanceof StringEndsWith s) {
      return strings(s.attribute(), c, v, cs, x -> x.endsWith(s.value()));
    } else if (f instanceof StringContains s) {
      return strings(s.attribute(), c, v, cs, x -> x.contains(s.value()));
    }
    return Truth.UNKNOWN;
  }

  private static Truth and(Truth a, Truth b) {
    if (a == Truth.FALSE || b == Truth.FALSE) {
      return Truth.FALSE;
    }
    if (a == Truth.UNKNOWN || b == Truth.UNKNOWN) {
      return Truth.UNKNOWN;
    }
    return a == Truth.NULL || b == Truth.NULL ? Truth.NULL : Truth.TRUE;
  }

  private static Truth or(Truth a, Truth b) {
    if (a == Truth.TRUE || b == Truth.TRUE) {
      return Truth.TRUE;
    }
    if (a == Truth.UNKNOWN || b == Truth.UNKNOWN) {
      return Truth.UNKNOWN;
    }
    return a == Truth.NULL || b == Truth.NULL ? Truth.NULL : Truth.FALSE;
  }

  private static final Object UNRESOLVED = new Object();

  /** The column's value in Catalyst's form (null for a null), or UNRESOLVED. */
  private static Object value(String attribute, StructType c, InternalRow v, boolean cs) {
    for (int i = 0; i < c.fields().length; i++) {
      StructField f = c.fields()[i];
      if (cs ? f.name().equals(attribute) : f.name().equalsIgnoreCase(attribute)) {
        return v.isNullAt(i) ? null : v.get(i, f.dataType());
      }
    }
    return UNRESOLVED;
  }

  private interface Order {
    boolean holds(int comparison);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Truth compare(String attribute, Object literal, StructType c, InternalRow v, boolean cs, Order order) {
    Object x = value(attribute, c, v, cs);
    if (x == UNRESOLVED) {
      return Truth.UNKNOWN;
    }
    if (x == null || literal == null) {
      return Truth.NULL;
    }
    // The filter's value is Scala's or Java's (a String, a LocalDate, a BigDecimal); the
    // partition value is Catalyst's (UTF8String, days, Decimal): both in Catalyst's form.
    Object y = CatalystTypeConverters.convertToCatalyst(literal);
    if (y == null || x.getClass() != y.getClass() || !(x instanceof Comparable)) {
      return Truth.UNKNOWN;
    }
    return order.holds(((Comparable) x).compareTo(y)) ? Truth.TRUE : Truth.FALSE;
  }

  private interface StringTest {
    boolean holds(String s);
  }

  private static Truth strings(String attribute, StructType c, InternalRow v, boolean cs, StringTest test) {
    Object x = value(attribute, c, v, cs);
    if (x == UNRESOLVED) {
      return Truth.UNKNOWN;
    }
    if (x == null) {
      return Truth.NULL;
    }
    return x instanceof UTF8String s ? (test.holds(s.toString()) ? Truth.TRUE : Truth.FALSE) : Truth.UNKNOWN;
  }
}
