package io.gpudirect.server;

import io.gpudirect.server.peers.ClientNetwork;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeSet;
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
 * so parallel attempts cannot slip in between. Other networks are never affected. A login with
 * the right secret clears its network's failures: whoever shares the address with a guesser
 * gets in whenever it is not backing off, and puts it back to its free failures.
 *
 * <p>At most {@code maxNetworks} networks are remembered. When one more fails, the one with the
 * fewest failures is forgotten (of those, the one quiet longest): one that is backing off is
 * forgotten only to make room for one with as many failures, so no one can end its own backoff
 * by failing from many other addresses unless each of them fails as often as it did.
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
  /** Networks remembered at once, by default. */
  static final int MAX_NETWORKS = 100_000;

  /** What became of a login. */
  enum Verdict { ACCEPTED, FAILED, REFUSED }

  /** A login's verdict; for a refused one, the words that tell the client why and for how long. */
  record Decision(Verdict verdict, String refusal) {}

  private static final class Network {
    final InetAddress key;
    /** Tells apart networks alike in failures and time, in {@link #forgetFirst}. */
    final long serial;
    /** Since its last login with the right secret. */
    long failures;
    long lastFailureNanos;
    long refusedUntilNanos;
    long failedSinceSummary;
    long refusedSinceSummary;
    boolean acceptedSinceSummary;
    /** Its first failure was logged on its own; later ones wait for the summary. */
    boolean summarising;

    Network(InetAddress key, long serial) {
      this.key = key;
      this.serial = serial;
    }
  }

  private final String server;
  private final int maxNetworks;
  private final LongSupplier clock;
  private long lastSummaryNanos;
  private long serials;
  /** Guarded by this, as is {@link #forgetFirst}, which holds the same networks. */
  private final Map<InetAddress, Network> networks = new HashMap<>();
  /** The order in which networks are forgotten when there are too many: fewest failures first. */
  private final TreeSet<Network> forgetFirst = new TreeSet<>(Comparator
      .comparingLong((Network n) -> n.failures)
      .thenComparingLong(n -> n.lastFailureNanos)
      .thenComparingLong(n -> n.serial));

  /** {@code clock}: nanoseconds, as {@link System#nanoTime}; tests pass one they move by hand. */
  LoginThrottle(String server, int maxNetworks, LongSupplier clock) {
    this.server = server;
    this.maxNetworks = maxNetworks;
    this.clock = clock;
    this.lastSummaryNanos = clock.getAsLong();
  }

  /**
   * Decides a login from {@code address} whose proof did or did not match: refused while the
   * network is backing off (whatever the proof), else accepted or failed by the proof.
   */
  synchronized Decision decide(InetAddress address, boolean proofMatches, String peer) {
    long now = clock.getAsLong();
    InetAddress key = ClientNetwork.of(address);
    Network n = networks.get(key);
    long refusedFor = n == null ? 0 : refusedForNanos(n, now);
    if (refusedFor > 0) {
      n.refusedSinceSummary++;
      long seconds = (refusedFor + 999_999_999L) / 1_000_000_000L;
      return new Decision(Verdict.REFUSED, "logins from " + ClientNetwork.show(key)
          + " are refused for another " + seconds + " s after " + n.failures
          + " failed logins from that address");
    }
    if (proofMatches) {
      if (n != null && n.failures > 0) {
        update(n, () -> n.failures = 0);
        n.acceptedSinceSummary = true;
      }
      return new Decision(Verdict.ACCEPTED, null);
    }
    Network failed = n != null ? n : admit(key);
    update(failed, () -> {
      failed.failures++;
      failed.lastFailureNanos = now;
    });
    if (failed.failures >= FREE_FAILURES) {
      failed.refusedUntilNanos = now + backoffNanos(failed.failures);
    }
    if (failed.summarising) {
      failed.failedSinceSummary++;
    } else {
      failed.summarising = true;
      LOG.warn("Client {} failed authentication on {}: its proof does not match the secret;"
          + " further failed logins from {} are counted and logged together", peer, server,
          ClientNetwork.show(key));
    }
    return new Decision(Verdict.FAILED, null);
  }

  /** A new network in the table, the one with least at stake forgotten to make room. */
  private Network admit(InetAddress key) {
    if (networks.size() >= maxNetworks) {
      forget(forgetFirst.first());
    }
    Network n = new Network(key, serials++);
    networks.put(key, n);
    forgetFirst.add(n);
    return n;
  }

  /** Changes what orders {@code n} among the networks to forget. */
  private void update(Network n, Runnable change) {
    forgetFirst.remove(n);
    change.run();
    forgetFirst.add(n);
  }

  private void forget(Network n) {
    networks.remove(n.key);
    forgetFirst.remove(n);
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

  /** One WARN line per network that failed or was refused since the last call; forgets quiet ones. */
  synchronized void logSummary() {
    long now = clock.getAsLong();
    long since = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(now - lastSummaryNanos));
    lastSummaryNanos = now;
    for (Iterator<Network> it = networks.values().iterator(); it.hasNext(); ) {
      Network n = it.next();
      if (n.failedSinceSummary > 0 || n.refusedSinceSummary > 0) {
        long waitMs = TimeUnit.NANOSECONDS.toMillis(refusedForNanos(n, now));
        LOG.warn("{} failed and {} refused logins from {} on {} in the last {} s ({} failed since"
            + " its last good login); {}", n.failedSinceSummary, n.refusedSinceSummary,
            ClientNetwork.show(n.key), server, since, n.failures, waitMs > 0
                ? "its logins are refused for another " + (waitMs + 999) / 1000 + " s"
                : n.acceptedSinceSummary ? "a login with the right secret has cleared its failures"
                : "its logins are allowed again");
        n.failedSinceSummary = 0;
        n.refusedSinceSummary = 0;
      } else {
        n.summarising = false;
      }
      n.acceptedSinceSummary = false;
      if (now - n.lastFailureNanos > FORGET_NANOS && refusedForNanos(n, now) == 0) {
        it.remove();
        forgetFirst.remove(n);
      }
    }
  }
}
