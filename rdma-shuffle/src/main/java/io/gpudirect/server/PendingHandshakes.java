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
 *
 * <p>Connections closed at the deadline or to make room are counted in the {@link RefusalLog},
 * not logged one by one.
 */
final class PendingHandshakes {
  private final int budget;
  private final int perAddress;
  private final Duration deadline;
  private final ScheduledExecutorService timers;
  /** Oldest first: accept order. Guarded by this. */
  private final LinkedHashMap<ServerConnection, Pending> pending = new LinkedHashMap<>();
  /** The same connections by network, oldest first. Guarded by this. */
  private final Map<InetAddress, ArrayDeque<Pending>> byNetwork = new HashMap<>();
  private final RefusalLog.Cause late;
  private final RefusalLog.Cause evicted;
  private final AtomicLong expired = new AtomicLong();

  private record Pending(ServerConnection connection, InetAddress network, ScheduledFuture<?> deadline) {}

  PendingHandshakes(int budget, int perAddress, Duration deadline, ScheduledExecutorService timers,
      RefusalLog log) {
    this.budget = budget;
    this.perAddress = perAddress;
    this.deadline = deadline;
    this.timers = timers;
    this.late = log.cause("did not finish its handshake within the " + deadline.toMillis() / 1000.0
        + " s deadline");
    this.evicted = log.cause("made room for a newer handshake (at most " + budget + " pending, "
        + perAddress + " per address)");
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
    String why = null;
    synchronized (this) {
      ArrayDeque<Pending> mine = byNetwork.get(network);
      if (mine != null && mine.size() >= perAddress) {
        victim = mine.peekFirst();
        why = "the oldest of " + perAddress + " pending from " + ClientNetwork.show(network);
      } else if (pending.size() >= budget) {
        victim = pending.values().iterator().next();
        why = "the oldest of " + budget + " pending";
      } else {
        victim = null;
      }
      if (victim != null) {
        remove(victim);
      }
      ScheduledFuture<?> timer = timers.schedule(() -> expire(connection),
          deadline.toNanos(), TimeUnit.NANOSECONDS);
      Pending p = new Pending(connection, network, timer);
      pending.put(connection, p);
      byNetwork.computeIfAbsent(network, n -> new ArrayDeque<>()).addLast(p);
    }
    if (victim != null) {
      evicted.closed(victim.connection().peer(), why);
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
    }
    expired.incrementAndGet();
    late.closed(connection.peer(), null);
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

  /** Connections closed at their deadline, since start. */
  long expired() {
    return expired.get();
  }

  /** Connections that end before finishing (their peer left) give their place back. */
  void ended(ServerConnection connection) {
    finish(connection);
  }
}
