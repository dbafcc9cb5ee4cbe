package io.gpudirect.server;

import java.util.LinkedHashMap;
import java.util.Map;

/** Counters of one {@link BlockServer} since it started. */
public record ServerStats(long bytesSent, long requests, long errors, long connectionsAccepted,
    long connectionsActive, long connectionsRejected, long authFailures, long readsInFlight,
    long uptimeMillis) {

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
    return m;
  }
}
