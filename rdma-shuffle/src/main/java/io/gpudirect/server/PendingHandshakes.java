package io.gpudirect.server;

import io.gpudirect.server.peers.ClientNetwork;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections that have not finished their handshake yet (TLS, HELLO and, with a secret, the
 * proof). They have a budget of their own, apart from {@code maxConnections}, which counts only
 * connections that finished it, so that strangers can never take the places of clients that
 * know the secret; and at most {@code perAddress} of them come from one address (see
 * {@link ClientNetwork}).
 *
 * <p>Each has one deadline for the whole handshake, counted from accept. A timer closes the
 * socket when it passes, however the bytes are trickling in: a per-read timeout is restarted by
 * every byte, so a peer sending one byte every few seconds was never closed.
 *
 * <p>A connection is in here from {@link #admit} until {@link #finish} or its end; whichever of
 * finish, the deadline and an eviction comes first decides, under this object's lock, so a
 * connection the deadline closed can never go on to be served.
 */
final class PendingHandshakes {
  private static final Logger LOG = LoggerFactory.getLogger(PendingHandshakes.class);

  private final String server;
  private final int budget;
  private final int perAddress;
  private final Duration deadline;
  private final ScheduledExecutorService timers;
  /** Oldest first: accept order. Guarded by this. */
  private final LinkedHashMap<ServerConnection, Pending> pending = new LinkedHashMap<>();
  /** The same connections by network, oldest first. Guarded by this. */
  private final Map<InetAddress, ArrayDeque<Pending>> byNetwork = new HashMap<>();
  /** Closed since the last summary, by network. Guarded by this. */
  private Map<InetAddress, long[]> closedSinceSummary = new HashMap<>();
  private long lastSummaryNanos = System.nanoTime();
  private final AtomicLong expired = new AtomicLong();

  private record Pending(ServerConnection connection, InetAddress network, ScheduledFuture<?> deadline) {}

  PendingHandshakes(String server, int budget, int perAddress, Duration deadline,
      ScheduledExecutorService timers) {
    this.server = server;
    this.budget = budget;
    this.perAddress = perAddress;
    this.deadline = deadline;
    this.timers = timers;
  }

  /**
   * Takes a new connection in, starting its deadline. When its address already has
   * {@code perAddress} handshakes pending, the oldest of those is closed; otherwise, when the
   * budget is full, the oldest pending handshake of any address is.
   *
   * <p>Why close the oldest rather than turn the newcomer away: a client that knows the secret
   * finishes its handshake in a few round trips (milliseconds), while a connection that holds
   * its place by trickling bytes is, by then, old. Turning newcomers away hands every freed
   * place to whoever reconnects fastest, which is the attacker (a good client got 4 of 163
   * attempts in while 256 trickling connections held every place); closing the oldest lets
   * every newcomer in, and to push a good client out before it finishes, an attacker must open
   * {@code budget} connections from other addresses within those milliseconds. The
   * per-address limit keeps one address from doing that, and from evicting anyone's pending
   * handshakes but its own.
   */
  void admit(ServerConnection connection, InetAddress address) {
    InetAddress network = ClientNetwork.of(address);
    Pending victim;
    synchronized (this) {
      ArrayDeque<Pending> mine = byNetwork.get(network);
      if (mine != null && mine.size() >= perAddress) {
        victim = mine.peekFirst();
      } else if (pending.size() >= budget) {
        victim = pending.values().iterator().next();
      } else {
        victim = null;
      }
      if (victim != null) {
        remove(victim);
        count(victim.network(), 1);
      }
      ScheduledFuture<?> timer = timers.schedule(() -> expire(connection),
          deadline.toNanos(), TimeUnit.NANOSECONDS);
      Pending p = new Pending(connection, network, timer);
      pending.put(connection, p);
      byNetwork.computeIfAbsent(network, n -> new ArrayDeque<>()).addLast(p);
    }
    if (victim != null) {
      LOG.debug("Closing {}, whose handshake is the oldest pending, to admit {}",
          victim.connection().peer(), connection.peer());
      victim.connection().closeNow();
    }
  }

  /**
   * The connection finished its handshake: its deadline no longer applies. False when the
   * deadline or a newer connection closed it first; it must then stop.
   */
  synchronized boolean finish(ServerConnection connection) {
    Pending p = pending.get(connection);
    if (p == null) {
      return false;
    }
    remove(p);
    return true;
  }

  private void expire(ServerConnection connection) {
    synchronized (this) {
      Pending p = pending.get(connection);
      if (p == null) {
        return;
      }
      remove(p);
      count(p.network(), 0);
    }
    expired.incrementAndGet();
    LOG.debug("Closing {}: no handshake within {}", connection.peer(), deadline);
    connection.closeNow();
  }

  /** Guarded by this. */
  private void remove(Pending p) {
    p.deadline().cancel(false);
    pending.remove(p.connection());
    ArrayDeque<Pending> mine = byNetwork.get(p.network());
    mine.remove(p);
    if (mine.isEmpty()) {
      byNetwork.remove(p.network());
    }
  }

  /** Guarded by this. kind 0: past the deadline; 1: evicted. */
  private void count(InetAddress network, int kind) {
    closedSinceSummary.computeIfAbsent(network, n -> new long[2])[kind]++;
  }

  /**
   * One WARN line for every connection closed before it finished its handshake since the last
   * call (a few per interval, however many there were); called on a fixed interval.
   */
  void logSummary(long now) {
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
    long late = 0;
    long pushed = 0;
    InetAddress most = null;
    long mostCount = -1;
    for (Map.Entry<InetAddress, long[]> e : closed.entrySet()) {
      long[] n = e.getValue();
      late += n[0];
      pushed += n[1];
      if (n[0] + n[1] > mostCount) {
        most = e.getKey();
        mostCount = n[0] + n[1];
      }
    }
    LOG.warn("BlockServer on {} closed {} connections in the last {} s before they finished the"
        + " handshake: {} past the {} s deadline, {} to make room for newer ones (at most {}"
        + " pending, {} per address); from {} addresses, most from {} ({})", server,
        late + pushed, Math.max(1, TimeUnit.NANOSECONDS.toSeconds(since)), late, deadline.toMillis() / 1000.0, pushed, budget,
        perAddress, closed.size(), ClientNetwork.show(most), mostCount);
  }

  /** Connections closed at their deadline, since start. */
  long expired() {
    return expired.get();
  }

  /** Connections that end before finishing (their peer left) give their place back. */
  void ended(ServerConnection connection) {
    finish(connection);
  }
}
