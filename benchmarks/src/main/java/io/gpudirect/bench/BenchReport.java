package io.gpudirect.bench;

import static io.gpudirect.json.JsonText.quote;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The bench's one table, as text for people or as JSON for tools. */
final class BenchReport {
  private final Map<String, String> context = new LinkedHashMap<>();
  private final List<Row> rows = new ArrayList<>();

  void context(String key, String value) {
    context.put(key, value);
  }

  void add(Row row) {
    rows.add(row);
  }

  List<Row> rows() {
    return rows;
  }

  String table() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : context.entrySet()) {
      sb.append("# ").append(e.getKey()).append(": ").append(e.getValue()).append('\n');
    }
    String fmt = "%-46s %8s %9s %8s %8s  %-24s %6s %6s  %-26s %s%n";
    sb.append(String.format(Locale.ROOT, fmt, "measurement", "Gbit/s", "CPU s/GB", "p50 us",
        "p99 us", "reference", "ratio", "x CPU", "target", "met"));
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT, fmt, r.section() + ": " + r.name(),
          num(r.gbitPerSecond(), 2), num(r.cpuSecondsPerGb(), 3), num(r.p50Micros(), 1),
          num(r.p99Micros(), 1), r.reference() == null ? "-" : r.reference(),
          num(r.ratio(), 2), num(r.cpuRatio(), 2),
          r.target() == null ? "-" : r.target(), r.met() == null ? "-" : r.met() ? "yes" : "NO"));
      if (r.note() != null) {
        sb.append("    ").append(r.note()).append('\n');
      }
    }
    return sb.toString();
  }

  String json() {
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, String> e : context.entrySet()) {
      sb.append(quote(e.getKey())).append(':').append(quote(e.getValue())).append(',');
    }
    sb.append("\"rows\":[");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      sb.append(i == 0 ? "" : ",").append('{')
          .append("\"section\":").append(quote(r.section()))
          .append(",\"name\":").append(quote(r.name()))
          .append(",\"gbit_per_s\":").append(jnum(r.gbitPerSecond()))
          .append(",\"cpu_s_per_gb\":").append(jnum(r.cpuSecondsPerGb()))
          .append(",\"p50_us\":").append(jnum(r.p50Micros()))
          .append(",\"p99_us\":").append(jnum(r.p99Micros()))
          .append(",\"reference\":").append(quote(r.reference()))
          .append(",\"ratio\":").append(jnum(r.ratio()))
          .append(",\"cpu_ratio\":").append(jnum(r.cpuRatio()))
          .append(",\"target\":").append(quote(r.target()))
          .append(",\"met\":").append(r.met() == null ? "null" : r.met().toString())
          .append(",\"note\":").append(quote(r.note()))
          .append('}');
    }
    return sb.append("]}").toString();
  }

  private static String num(double v, int decimals) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  private static String jnum(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "null" : String.format(Locale.ROOT, "%.6g", v);
  }
}
