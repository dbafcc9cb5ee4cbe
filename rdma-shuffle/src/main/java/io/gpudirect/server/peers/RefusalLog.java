package io.gpudirect.server.peers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log lines of connections a peer can make, and have closed, without knowing the secret:
 * garbage, plaintext to a TLS server, connections past a limit, handshakes never finished, RDMA
 * endpoints never bound. A line each would let anyone who can reach the port write the log at
 * the rate they can connect (1,569 lines in 10 s), and drown what matters in it. Instead, per
 * cause: the first at once, with its peer and what was wrong, so that one misconfigured client
 * is seen as soon as it tries; the rest counted, and summed up in one line per cause each time
 * {@link #logSummary} runs (the server's timer, every {@link #SUMMARY_INTERVAL}),
 * with a few of their peers. A cause with nothing to sum up goes quiet, and its next connection
 * is logged at once again.
 *
 * <p>Usage: one per server; each place that closes such a connection counts it under its cause:
 *
 * <pre>{@code
 * RefusalLog.Cause unbound = refusals.cause("sent no RDMA_BIND within 10 s");  // once, or each time
 * ...
 * unbound.closed(endpoint.peer(), "its first frame was RKEY");
 * }</pre>
 */
public final class RefusalLog {
  /** How often the server sums its refusals up. */
  public static final Duration SUMMARY_INTERVAL = Duration.ofSeconds(10);
  private static final Logger LOG = LoggerFactory.getLogger(RefusalLog.class);
  /** Peers named in a summary line. */
  static final int EXAMPLES = 3;

  private final String server;
  /** By their words. Guarded by this. */
  private final Map<String, Cause> causes = new LinkedHashMap<>();
  /** Guarded by this. */
  private long lastSummaryNanos = System.nanoTime();

  /** {@code server}: host:port of the server, as the log names it. */
  public RefusalLog(String server) {
    this.server = server;
  }

  /**
   * The reason {@code what}, in words that follow "closed a connection from PEER:", e.g. "did not
   * start TLS"; the same words give the same cause. Words fixed in the code (and the server's
   * settings), never a peer's: each cause is kept as long as the server runs.
   */
  public synchronized Cause cause(String what) {
    return causes.computeIfAbsent(what, Cause::new);
  }

  /** One line per cause that closed connections since the last call, beyond the one logged at once. */
  public void logSummary(long now) {
    List<String> lines = new ArrayList<>();
    synchronized (this) {
      long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(now - lastSummaryNanos));
      lastSummaryNanos = now;
      for (Cause c : causes.values()) {
        String line = c.summary(seconds);
        if (line != null) {
          lines.add(line);
        }
      }
    }
    lines.forEach(LOG::warn);
  }

  /** Connections closed for one reason. */
  public final class Cause {
    private final String what;
    // All guarded by RefusalLog.this. Summarising: the first was logged at once, and the
    // connections since are counted, with the first few peers and the first's detail.
    private boolean summarising;
    private long count;
    private final Set<String> examples = new LinkedHashSet<>();
    private String firstDetail;

    private Cause(String what) {
      this.what = what;
    }

    /**
     * A connection from {@code peer} was closed for this reason; {@code detail}: what it did
     * (bytes it sent, an exception's message), or null.
     */
    public void closed(String peer, String detail) {
      synchronized (RefusalLog.this) {
        if (summarising) {
          count++;
          if (examples.size() < EXAMPLES) {
            examples.add(peer);
          }
          if (firstDetail == null) {
            firstDetail = detail;
          }
          return;
        }
        summarising = true;
      }
      LOG.warn("BlockServer on {} closed a connection from {}: {}{}; more of these are counted and"
          + " logged together every {} s", server, peer, what, detail == null ? "" : ": " + detail,
          SUMMARY_INTERVAL.toSeconds());
    }

    /** Guarded by RefusalLog.this. The line for the connections since the last, or null. */
    private String summary(long seconds) {
      if (count == 0) {
        summarising = false;
        return null;
      }
      String line = "BlockServer on " + server + " closed " + count + " more connections in the last "
          + seconds + " s: " + what + " (from " + String.join(", ", examples)
          + (count > examples.size() ? " and others" : "")
          + (firstDetail == null ? "" : "; the first: " + firstDetail) + ")";
      count = 0;
      examples.clear();
      firstDetail = null;
      return line;
    }
  }
}
