package io.gpudirect.server.peers;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Peers that have not proven who they are yet: a budget of their own, at most
 * {@code perAddress} from one network ({@link ClientNetwork}), and one deadline each, counted
 * from {@link #admit}, which a timer keeps however the peer's bytes trickle in.
 *
 * <p>A full budget closes the oldest pending peer rather than turning the newcomer away: a peer
 * that knows the secret proves it within a few round trips (milliseconds), while one that holds
 * its place without proving anything is, by then, old. Turning newcomers away hands every freed
 * place to whoever reconnects fastest, which is the attacker; closing the oldest lets every
 * newcomer in, and to push a good peer out before it proves itself an attacker must fill the
 * whole budget from other networks within those milliseconds. The per-network limit keeps one
 * network from doing that, and from evicting anyone's pending peers but its own.
 *
 * <p>A peer is in here from {@link #admit} until {@link #finish} or its end; whichever of
 * finish, the deadline and an eviction comes first decides, under this object's lock, so a peer
 * the deadline closed can never go on to be served.
 *
 * <p>Closures are never logged one by one (a flood would write a line per connection): they are
 * counted by cause and network and written by {@link #logSummary}, one line per interval.
 *
 * @param <P> what a pending peer is (a TCP connection, an RDMA endpoint)
 */
public final class PendingPeers<P> {
  private static final Logger LOG = LoggerFactory.getLogger(PendingPeers.class);
  private static final int DEADLINE = 0;
  private static final int EVICTED = 1;
  private static final int REFUSED = 2;

  private final String server;
  private final String what;
  private final String proof;
  private final int budget;
  private final int perAddress;
  private final Duration deadline;
  private final ScheduledExecutorService timers;
  private final Consumer<P> close;
  /** Oldest first: admission order. Guarded by this. */
  private final LinkedHashMap<P, Pending<P>> pending = new LinkedHashMap<>();
  /** The same peers by network, oldest first. Guarded by this. */
  private final Map<InetAddress, ArrayDeque<Pending<P>>> byNetwork = new HashMap<>();
  /** Closed since the last summary, by network and cause. Guarded by this. */
  private Map<InetAddress, long[]> closedSinceSummary = new HashMap<>();
  private long lastSummaryNanos = System.nanoTime();
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  private record Pending<P>(P peer, InetAddress network, ScheduledFuture<?> deadline) {}

  /**
   * @param server the server, for the summary ("BlockServer on HOST:PORT")
   * @param what the peers, plural, for the summary ("connections", "RDMA endpoints")
   * @param proof what a peer must do to leave ("finished the handshake")
   * @param close closes a peer that the deadline or an eviction ends; called without this
   *     object's lock
   */
  public PendingPeers(String server, String what, String proof, int budget, int perAddress,
      Duration deadline, ScheduledExecutorService timers, Consumer<P> close) {
    if (budget <= 0 || perAddress <= 0) {
      throw new IllegalArgumentException("Pending " + what + ": budget " + budget + " and per address "
          + perAddress + " must be positive");
    }
    this.server = server;
    this.what = what;
    this.proof = proof;
    this.budget = budget;
    this.perAddress = perAddress;
    this.deadline = deadline;
    this.timers = timers;
    this.close = close;
  }

  /**
   * Takes a new peer in, starting its deadline. When its network already has {@code perAddress}
   * peers pending, the oldest of those is closed; otherwise, when the budget is full, the oldest
   * pending peer of any network is.
   */
  public void admit(P peer, InetAddress address) {
    InetAddress network = ClientNetwork.of(address);
    Pending<P> victim;
    synchronized (this) {
      ArrayDeque<Pending<P>> mine = byNetwork.get(network);
      if (mine != null && mine.size() >= perAddress) {
        victim = mine.peekFirst();
      } else if (pending.size() >= budget) {
        victim = pending.values().iterator().next();
      } else {
        victim = null;
      }
      if (victim != null) {
        remove(victim);
        count(victim.network(), EVICTED);
      }
      ScheduledFuture<?> timer = timers.schedule(() -> expire(peer),
          deadline.toNanos(), TimeUnit.NANOSECONDS);
      Pending<P> p = new Pending<>(peer, network, timer);
      pending.put(peer, p);
      byNetwork.computeIfAbsent(network, n -> new ArrayDeque<>()).addLast(p);
    }
    if (victim != null) {
      LOG.debug("Closing {} pending {}, the oldest, to admit {}", what, victim.peer(), peer);
      close.accept(victim.peer());
    }
  }

  /**
   * The peer proved itself: its deadline no longer applies. False when the deadline or a newer
   * peer closed it first; it must then stop.
   */
  public synchronized boolean finish(P peer) {
    Pending<P> p = pending.get(peer);
    if (p == null) {
      return false;
    }
    remove(p);
    return true;
  }

  /** A peer that ends before proving itself (it left) gives its place back. */
  public void ended(P peer) {
    finish(peer);
  }

  /**
   * The peer sent something other than its proof, or a wrong one, and its owner closes it:
   * counted for the summary instead of logged. Returns false when it had already left.
   */
  public boolean refused(P peer) {
    synchronized (this) {
      Pending<P> p = pending.get(peer);
      if (p == null) {
        return false;
      }
      remove(p);
      count(p.network(), REFUSED);
    }
    refused.incrementAndGet();
    return true;
  }

  private void expire(P peer) {
    synchronized (this) {
      Pending<P> p = pending.get(peer);
      if (p == null) {
        return;
      }
      remove(p);
      count(p.network(), DEADLINE);
    }
    expired.incrementAndGet();
    LOG.debug("Closing {}: not {} within {}", peer, proof, deadline);
    close.accept(peer);
  }

  /** Guarded by this. */
  private void remove(Pending<P> p) {
    p.deadline().cancel(false);
    pending.remove(p.peer());
    ArrayDeque<Pending<P>> mine = byNetwork.get(p.network());
    mine.remove(p);
    if (mine.isEmpty()) {
      byNetwork.remove(p.network());
    }
  }

  /** Guarded by this. */
  private void count(InetAddress network, int cause) {
    closedSinceSummary.computeIfAbsent(network, n -> new long[3])[cause]++;
  }

  /**
   * One WARN line for every peer closed before it proved itself since the last call (one per
   * interval, however many there were); called on a fixed interval.
   */
  public void logSummary(long now) {
    Map<InetAddress, long[]> closed;
    long since;
    synchronized (this) {
      since = now - lastSummaryNanos;
      lastSummaryNanos = now;
      if (closedSinceSummary.isEmpty()) {
        return;
      }
      closed = closedSinceSummary;
      closedSinceSummary = new HashMap<>();
    }
    long[] total = new long[3];
    InetAddress most = null;
    long mostCount = -1;
    for (Map.Entry<InetAddress, long[]> e : closed.entrySet()) {
      long[] n = e.getValue();
      long all = 0;
      for (int cause = 0; cause < total.length; cause++) {
        total[cause] += n[cause];
        all += n[cause];
      }
      if (all > mostCount) {
        most = e.getKey();
        mostCount = all;
      }
    }
    LOG.warn("BlockServer on {} closed {} {} in the last {} s before they {}: {} past the {} s"
        + " deadline, {} to make room for newer ones (at most {} pending, {} per address), {} for"
        + " sending something else; from {} addresses, most from {} ({})", server,
        total[0] + total[1] + total[2], what, Math.max(1, TimeUnit.NANOSECONDS.toSeconds(since)),
        proof, total[DEADLINE], deadline.toMillis() / 1000.0, total[EVICTED], budget, perAddress,
        total[REFUSED], closed.size(), ClientNetwork.show(most), mostCount);
  }

  /** Peers closed at their deadline, since start. */
  public long expired() {
    return expired.get();
  }

  /** Peers closed for sending something other than their proof, since start. */
  public long refused() {
    return refused.get();
  }

  /** Peers pending now. */
  public synchronized int size() {
    return pending.size();
  }
}
