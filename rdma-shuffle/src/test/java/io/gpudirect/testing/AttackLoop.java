package io.gpudirect.testing;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An attacker in a race test: one {@link Round} after another on a daemon thread, as fast as
 * they go (nothing between rounds: no sleep, no lock, only a volatile read of the stop flag and
 * the count), from construction until {@link #close()}. A race test's reliability rests on that
 * pace. The first failure ends the loop and is thrown from {@code close()}, so that a test cannot
 * pass on an attacker that stopped early. A subclass passes its round to the constructor, which
 * starts the thread: the round must use only what it captured, never the subclass's fields
 * (not yet set when it first runs).
 */
public class AttackLoop implements AutoCloseable {
  /** One round of the attack: renames, links, removals, whatever the attacker does. */
  @FunctionalInterface
  public interface Round {
    void run() throws IOException;
  }

  private final String name;
  private final Thread thread;
  private final AtomicLong rounds = new AtomicLong();
  private volatile boolean stop;
  private volatile Throwable failure;

  /** Starts the loop; {@code name} (e.g. "rename-loop") names its thread and its failure. */
  public AttackLoop(String name, Round round) {
    this.name = name;
    this.thread = new Thread(() -> run(round), "test-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  private void run(Round round) {
    try {
      while (!stop) {
        round.run();
        rounds.incrementAndGet();
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  /** Rounds done so far. */
  public final long rounds() {
    return rounds.get();
  }

  /** Stops after the round under way; throws what the loop hit, if it hit anything. */
  @Override
  public final void close() throws InterruptedException {
    stop = true;
    thread.join(10_000);
    if (failure != null) {
      throw new AssertionError("the " + name + " failed after " + rounds.get() + " rounds", failure);
    }
  }
}
