package io.gpudirect.server;

import io.gpudirect.server.peers.PendingPeers;
import java.net.InetAddress;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections of one server, each with its thread: pending until its handshake ends
 * (within the deadline and budget of {@link PendingPeers}), then served, at most
 * {@code maxConnections} at once.
 */
final class ServedConnections {
  private final Map<ServerConnection, Thread> threads = new ConcurrentHashMap<>();
  /** Connections past their handshake: what {@code maxConnections} counts. */
  private final AtomicInteger served = new AtomicInteger();
  private final PendingPeers<ServerConnection> pending;
  private final int maxConnections;
  private final ServerCounters counters;

  ServedConnections(PendingPeers<ServerConnection> pending, int maxConnections, ServerCounters counters) {
    this.pending = pending;
    this.maxConnections = maxConnections;
    this.counters = counters;
  }

  int maxConnections() {
    return maxConnections;
  }

  /** No room for another: a new connection is refused before its handshake. */
  boolean full() {
    return served.get() >= maxConnections;
  }

  /** {@code conn}, served by {@code thread} (not started yet), is one of this server's. */
  void add(ServerConnection conn, Thread thread) {
    threads.put(conn, thread);
  }

  /** {@code conn} starts its handshake, its deadline running from now. */
  void admit(ServerConnection conn, InetAddress from) {
    pending.admit(conn, from);
  }

  /** {@code conn} was never served: its thread did not start. */
  void dropped(ServerConnection conn) {
    threads.remove(conn);
    pending.ended(conn);
  }

  /**
   * The connection finished its handshake: it leaves the pending ones and counts against
   * {@code maxConnections}. False, with the connection closed or to be closed, when its
   * handshake deadline passed or a newer connection took its place first; or when the limit
   * is reached, which {@code limitReached} is then told so that the client can be.
   */
  boolean handshakeDone(ServerConnection conn, Runnable limitReached) {
    if (!pending.finish(conn)) {
      return false;
    }
    if (served.incrementAndGet() > maxConnections) {
      served.decrementAndGet();
      counters.countRejected();
      limitReached.run();
      return false;
    }
    return true;
  }

  /** {@code wasServed}: whether it got past {@link #handshakeDone}. */
  void ended(ServerConnection conn, boolean wasServed) {
    pending.ended(conn);
    if (wasServed) {
      served.decrementAndGet();
    }
    threads.remove(conn);
  }

  int size() {
    return threads.size();
  }

  boolean isEmpty() {
    return threads.isEmpty();
  }

  Set<ServerConnection> all() {
    return threads.keySet();
  }

  Collection<Thread> threads() {
    return threads.values();
  }

  PendingPeers<ServerConnection> pending() {
    return pending;
  }
}
