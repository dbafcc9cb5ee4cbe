package io.gpudirect.bench;

/**
 * One line of the bench table: what was measured, its figures, and, for a target of issue 5,
 * its reference, the ratios to it and whether the target is met. Figures that do not apply
 * are NaN (shown as "-", null in JSON).
 */
record Row(String section, String name, double gbitPerSecond, double cpuSecondsPerGb,
    double p50Micros, double p99Micros, String reference, double ratio,
    double cpuRatio, String target, Boolean met, String note) {

  static Row of(String section, String name, Measurement m) {
    return new Row(section, name, m.gbitPerSecond(), m.cpuSecondsPerGb(), Double.NaN,
        Double.NaN, null, Double.NaN, Double.NaN, null, null, null);
  }

  static Row latency(String section, String name, Latencies l) {
    return new Row(section, name, Double.NaN, Double.NaN, l.percentileMicros(50),
        l.percentileMicros(99), null, Double.NaN, Double.NaN, null, null, null);
  }

  Row against(String ref, double ratioValue, double cpuRatio, String targetText, boolean ok) {
    return new Row(section, name, gbitPerSecond, cpuSecondsPerGb, p50Micros, p99Micros, ref,
        ratioValue, cpuRatio, targetText, ok, note);
  }

  /** Ratios to {@code ref} with no target: a comparison, not a goal. */
  Row comparedWith(String ref, double ratioValue, double cpuRatio) {
    return new Row(section, name, gbitPerSecond, cpuSecondsPerGb, p50Micros, p99Micros, ref,
        ratioValue, cpuRatio, null, null, note);
  }

  Row withNote(String text) {
    return new Row(section, name, gbitPerSecond, cpuSecondsPerGb, p50Micros, p99Micros,
        reference, ratio, cpuRatio, target, met, text);
  }
}
