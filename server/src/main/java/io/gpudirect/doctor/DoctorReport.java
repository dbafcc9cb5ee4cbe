package io.gpudirect.doctor;

import static io.gpudirect.json.JsonText.quote;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** How {@code doctor} prints its findings (text or JSON) and what it exits with. */
public record DoctorReport(String host, Set<HostChecks.Requirement> required, List<Finding> findings) {
  /** 1 when anything required failed, else 0: warnings never fail a host. */
  public int exitCode() {
    return count(Finding.Status.FAIL) > 0 ? 1 : 0;
  }

  public long count(Finding.Status status) {
    return findings.stream().filter(f -> f.status() == status).count();
  }

  private String requiredText() {
    return required.isEmpty() ? "nothing beyond TCP into host memory"
        : required.stream().map(r -> r.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(","));
  }

  public void printText(PrintStream out) {
    out.println("gpudirect doctor on " + host + " (required: " + requiredText() + ")");
    int width = findings.stream().mapToInt(f -> f.check().length()).max().orElse(10);
    for (Finding f : findings) {
      out.printf("%-4s  %-" + width + "s  %s%n", f.status(), f.check(), f.summary());
      // What is absent and not required needs no fixing here; JSON still carries the command.
      if (!f.fix().isEmpty() && (f.status() == Finding.Status.WARN || f.status() == Finding.Status.FAIL)) {
        out.printf("      %-" + width + "s  fix: %s%n", "", f.fix());
      }
    }
    out.printf("%d ok, %d warnings, %d failures, %d skipped: exit %d%n", count(Finding.Status.OK),
        count(Finding.Status.WARN), count(Finding.Status.FAIL), count(Finding.Status.SKIP), exitCode());
  }

  public void printJson(PrintStream out) {
    StringBuilder sb = new StringBuilder("{\"host\":").append(quote(host)).append(",\"required\":[");
    sb.append(required.stream().map(r -> quote(r.name().toLowerCase(Locale.ROOT))).collect(Collectors.joining(",")));
    sb.append("],\"exitCode\":").append(exitCode()).append(",\"findings\":[");
    for (int i = 0; i < findings.size(); i++) {
      Finding f = findings.get(i);
      sb.append(i == 0 ? "" : ",").append("\n  {\"check\":").append(quote(f.check()))
          .append(",\"status\":").append(quote(f.status().name()))
          .append(",\"summary\":").append(quote(f.summary()))
          .append(",\"fix\":").append(quote(f.fix())).append('}');
    }
    out.println(sb.append("\n]}"));
  }
}
