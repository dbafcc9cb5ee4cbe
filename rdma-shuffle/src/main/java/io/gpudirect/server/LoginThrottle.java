package io.gpudirect.server;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Failed logins, by client network ({@link ClientNetwork}). The first {@link #FREE_FAILURES}
 * cost nothing (a mistyped secret, a job started with the old one); from then on, the network's
 * logins are refused, without the proof being looked at, for a time that doubles with each
 * further failure, from {@link #FIRST_BACKOFF} up to {@link #MAX_BACKOFF}. A guesser thus gets
 * a handful of tries, then one per {@code MAX_BACKOFF}, however fast it tries and however many
 * connections it opens; the decision and the failure it follows from are taken under one lock,
 * so parallel attempts cannot slip in between. Other networks are never affected.
 *
 * <p>Logged in aggregate: a network's first failure at once, then one WARN line per network per
 * summary interval with its counts, instead of a line per try.
 */
final class LoginThrottle {
  private static final Logger LOG = LoggerFactory.getLogger(LoginThrottle.class);
  static final int FREE_FAILURES = 5;
  static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(60);
  /** A network with no failure for this long, and not refused any more, is forgotten. */
  static final long FORGET_NANOS = 2 * MAX_BACKOFF.toNanos();
  /** Networks remembered at once; beyond this, the one seen least recently is forgotten. */
  static final int MAX_NETWORKS = 100_000;

  /** What became of a login. */
  enum Verdict { ACCEPTED, FAILED, REFUSED }

  private static final class Network {
    long failures;
    long lastFailureNanos;
    long refusedUntilNanos;
    long failedSinceSummary;
    long refusedSinceSummary;
    /** Its first failure was logged on its own; later ones wait for the summary. */
    boolean summarising;
  }

  private final String server;
  private final int maxNetworks;
  private final LongSupplier clock;
  private long lastSummaryNanos;
  /** Least recently seen first. Guarded by this. */
  private final LinkedHashMap<InetAddress, Network> networks =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<InetAddress, Network> eldest) {
          return size() > maxNetworks;
        }
      };

  LoginThrottle(String server) {
    this(server, MAX_NETWORKS, System::nanoTime);
  }

  /** {@code clock}: nanoseconds, as {@link System#nanoTime}; tests pass one they move by hand. */
  LoginThrottle(String server, int maxNetworks, LongSupplier clock) {
    this.server = server;
    this.maxNetworks = maxNetworks;
    this.clock = clock;
    this.lastSummaryNanos = clock.getAsLong();
  }

  long now() {
    return clock.getAsLong();
  }

  /**
   * Decides a login from {@code address} whose proof did or did not match: refused while the
   * network is backing off (whatever the proof), else accepted or failed by the proof.
   */
  synchronized Verdict decide(InetAddress address, boolean proofMatches, String peer, long now) {
    InetAddress key = ClientNetwork.of(address);
    Network n = networks.get(key);
    if (n != null && refusedForNanos(n, now) > 0) {
      n.refusedSinceSummary++;
      return Verdict.REFUSED;
    }
    if (proofMatches) {
      return Verdict.ACCEPTED;
    }
    if (n == null) {
      n = new Network();
      networks.put(key, n);
    }
    n.failures++;
    n.lastFailureNanos = now;
    if (n.failures >= FREE_FAILURES) {
      n.refusedUntilNanos = now + backoffNanos(n.failures);
    }
    if (n.summarising) {
      n.failedSinceSummary++;
    } else {
      n.summarising = true;
      LOG.warn("Client {} failed authentication on {}: its proof does not match the secret;"
          + " further failed logins from {} are counted and logged together", peer, server,
          ClientNetwork.show(key));
    }
    return Verdict.FAILED;
  }

  /** How much longer the network's logins are refused; 0 when they are not. */
  private static long refusedForNanos(Network n, long now) {
    return n.failures < FREE_FAILURES ? 0 : Math.max(0, n.refusedUntilNanos - now);
  }

  /** How long logins from the network are refused after its {@code failures}-th failure. */
  static long backoffNanos(long failures) {
    long doublings = Math.min(failures - FREE_FAILURES, 30);
    return Math.min(MAX_BACKOFF.toNanos(), FIRST_BACKOFF.toNanos() << doublings);
  }

  /** Words for a refused client: why, for how long, and what to check. */
  synchronized String refusal(InetAddress address, long now) {
    Network n = networks.get(ClientNetwork.of(address));
    long failures = n == null ? 0 : n.failures;
    long seconds = n == null ? 0 : (refusedForNanos(n, now) + 999_999_999L) / 1_000_000_000L;
    return "Server " + server + " refuses logins from " + ClientNetwork.show(ClientNetwork.of(address))
        + " for another " + seconds + " s after " + failures + " failed logins; check that"
        + " spark.gpudirect.auth.secret matches the server's secret, then retry";
  }

  /** One WARN line per network that failed or was refused since the last call; forgets quiet ones. */
  synchronized void logSummary(long now) {
    long since = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(now - lastSummaryNanos));
    lastSummaryNanos = now;
    for (Iterator<Map.Entry<InetAddress, Network>> it = networks.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<InetAddress, Network> e = it.next();
      Network n = e.getValue();
      if (n.failedSinceSummary > 0 || n.refusedSinceSummary > 0) {
        long waitMs = TimeUnit.NANOSECONDS.toMillis(refusedForNanos(n, now));
        LOG.warn("{} failed and {} refused logins from {} on {} in the last {} s ({} failed in all);"
            + " {}", n.failedSinceSummary, n.refusedSinceSummary, ClientNetwork.show(e.getKey()),
            server, since, n.failures, waitMs > 0
                ? "its logins are refused for another " + (waitMs + 999) / 1000 + " s"
                : "its logins are allowed again");
        n.failedSinceSummary = 0;
        n.refusedSinceSummary = 0;
      } else {
        n.summarising = false;
      }
      if (now - n.lastFailureNanos > FORGET_NANOS && refusedForNanos(n, now) == 0) {
        it.remove();
      }
    }
  }
}
