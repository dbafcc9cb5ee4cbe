package io.gpudirect.testing;

import java.util.Arrays;
import java.util.List;

/** The median the benchmarks report (the mean of the middle two for an even count; NaN for none). */
public final class Medians {
  private Medians() {}

  public static double of(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  public static double of(List<Double> values) {
    return of(values.stream().mapToDouble(Double::doubleValue).toArray());
  }
}
