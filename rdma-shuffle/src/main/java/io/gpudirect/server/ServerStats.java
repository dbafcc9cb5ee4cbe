package io.gpudirect.server;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/** Counters of one {@link BlockServer} since it started. */
public record ServerStats(long bytesSent, long requests, long errors, long connectionsAccepted,
    long connectionsActive, long connectionsRejected, long authFailures, long readsInFlight,
    long uptimeMillis) {

  private static final com.sun.management.OperatingSystemMXBean PROCESS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  /** By name, in a fixed order: what STATUS answers and {@code gpudirect server --status} prints. */
  public Map<String, Long> toMap() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("bytesSent", bytesSent);
    m.put("requests", requests);
    m.put("errors", errors);
    m.put("connectionsAccepted", connectionsAccepted);
    m.put("connectionsActive", connectionsActive);
    m.put("connectionsRejected", connectionsRejected);
    m.put("authFailures", authFailures);
    m.put("readsInFlight", readsInFlight);
    m.put("uptimeMillis", uptimeMillis);
    // The whole server process's, not this server's alone: what `gpudirect bench URI` divides
    // by the bytes it fetched, to give the server's CPU per GB beside the client's.
    m.put("processCpuMillis", PROCESS.getProcessCpuTime() / 1_000_000);
    return m;
  }
}
