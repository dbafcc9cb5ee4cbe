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
import java.util.function.Function;

/**
 * Peers that have not proven who they are yet: a budget of their own, at most
 * {@code perAddress} from one network ({@link ClientNetwork}), and one deadline each, counted
 * from {@link #admit}, which a timer keeps however the peer's bytes trickle in (a per-read
 * timeout is restarted by every byte, so a peer sending one byte every few seconds was never
 * closed).
 *
 * <p>A full budget closes the oldest pending peer rather than turning the newcomer away: a peer
 * that knows the secret proves it within a few round trips (milliseconds), while one that holds
 * its place without proving anything is, by then, old. Turning newcomers away hands every freed
 * place to whoever reconnects fastest, which is the attacker (a good client got 4 of 163
 * attempts in while 256 trickling connections held every place); closing the oldest lets every
 * newcomer in, and to push a good peer out before it proves itself an attacker must fill the
 * whole budget from other networks within those milliseconds. The per-network limit keeps one
 * network from doing that, and from evicting anyone's pending peers but its own.
 *
 * <p>A peer is in here from {@link #admit} until {@link #finish} or its end; whichever of
 * finish, the deadline and an eviction comes first decides, under this object's lock, so a peer
 * the deadline closed can never go on to be served.
 *
 * <p>Peers closed at the deadline, to make room, or for sending something other than their
 * proof are counted in the {@link RefusalLog}, never logged one by one.
 *
 * @param <P> what a pending peer is (a TCP connection, an RDMA queue pair)
 */
public final class PendingPeers<P> {
  private final int budget;
  private final int perAddress;
  private final Duration deadline;
  private final ScheduledExecutorService timers;
  private final Function<P, String> name;
  private final Consumer<P> close;
  /** Oldest first: admission order. Guarded by this. */
  private final LinkedHashMap<P, Pending<P>> pending = new LinkedHashMap<>();
  /** The same peers by network, oldest first. Guarded by this. */
  private final Map<InetAddress, ArrayDeque<Pending<P>>> byNetwork = new HashMap<>();
  private final RefusalLog.Cause late;
  private final RefusalLog.Cause evicted;
  private final RefusalLog.Cause refusedCause;
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  private record Pending<P>(P peer, InetAddress network, ScheduledFuture<?> deadline) {}

  /**
   * @param what the peers, singular, for the log ("handshake", "RDMA queue pair")
   * @param proof what a peer must do within the deadline, after "did not" ("finish its handshake")
   * @param name a peer's address, as the log shows it
   * @param close closes a peer that the deadline or an eviction ends; called without this
   *     object's lock
   */
  public PendingPeers(String what, String proof, int budget, int perAddress, Duration deadline,
      ScheduledExecutorService timers, RefusalLog log, Function<P, String> name, Consumer<P> close) {
    if (budget <= 0 || perAddress <= 0) {
      throw new IllegalArgumentException("Pending " + what + "s: budget " + budget
          + " and per address " + perAddress + " must be positive");
    }
    this.budget = budget;
    this.perAddress = perAddress;
    this.deadline = deadline;
    this.timers = timers;
    this.name = name;
    this.close = close;
    this.late = log.cause("did not " + proof + " within the " + deadline.toMillis() / 1000.0
        + " s deadline");
    this.evicted = log.cause("made room for a newer " + what + " (at most " + budget + " pending, "
        + perAddress + " per address)");
    this.refusedCause = log.cause("broke off or was refused before it could " + proof);
  }

  /**
   * Takes a new peer in, starting its deadline. When its network already has {@code perAddress}
   * peers pending, the oldest of those is closed; otherwise, when the budget is full, the oldest
   * pending peer of any network is.
   */
  public void admit(P peer, InetAddress address) {
    InetAddress network = ClientNetwork.of(address);
    Pending<P> victim;
    String why = null;
    synchronized (this) {
      ArrayDeque<Pending<P>> mine = byNetwork.get(network);
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
      ScheduledFuture<?> timer = timers.schedule(() -> expire(peer), deadline.toNanos(),
          TimeUnit.NANOSECONDS);
      Pending<P> p = new Pending<>(peer, network, timer);
      pending.put(peer, p);
      byNetwork.computeIfAbsent(network, n -> new ArrayDeque<>()).addLast(p);
    }
    if (victim != null) {
      evicted.closed(name.apply(victim.peer()), why);
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
   * The peer sent something other than its proof, or a wrong one ({@code detail} says what), and
   * its owner closes it: counted, not logged one by one. False when it had already left.
   */
  public boolean refused(P peer, String detail) {
    synchronized (this) {
      Pending<P> p = pending.get(peer);
      if (p == null) {
        return false;
      }
      remove(p);
    }
    refused.incrementAndGet();
    refusedCause.closed(name.apply(peer), detail);
    return true;
  }

  private void expire(P peer) {
    synchronized (this) {
      Pending<P> p = pending.get(peer);
      if (p == null) {
        return;
      }
      remove(p);
    }
    expired.incrementAndGet();
    late.closed(name.apply(peer), null);
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
