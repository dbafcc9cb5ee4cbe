package io.gpudirect.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Waits for what happens a moment after the call that causes it returns: a server's connection
 * thread starts after the client's connect has returned, a closed reader thread ends after
 * close, a descriptor is closed by an idle timer. A wait ends as soon as what it waits for is
 * there (a thread that must end is joined); its limit, {@link #LIMIT}, is for a leak to fail
 * rather than hang, and long enough that a machine loaded many times over never reaches it.
 * Fixed sleeps and short limits made tests fail on loaded build machines.
 */
public final class Settle {
  /** Reached only when what is awaited never comes. */
  public static final Duration LIMIT = Duration.ofSeconds(20);
  private static final long POLL_MILLIS = 10;

  private Settle() {}

  /** Live threads whose name starts with {@code prefix}. */
  public static long liveThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
  }

  /** The threads alive now: a snapshot for {@link #threadsSince}. */
  public static java.util.Set<Thread> threadsNow() {
    return java.util.Set.copyOf(Thread.getAllStackTraces().keySet());
  }

  /**
   * The live threads named {@code prefix} that are not among {@code before} ({@link #threadsNow}
   * at some moment): those started since, whatever other tests left behind.
   * A count of all live threads by name drops when a thread an earlier test left (an idle pool
   * thread past its keep-alive) ends meanwhile, as one did in CI on 2026-12-06.
   */
  public static long threadsSince(java.util.Set<Thread> before, String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix) && !before.contains(t)).count();
  }

  /**
   * Waits until {@code expected} live threads are named {@code prefix}, joining one of those
   * above it at a time; returns how many there are when it stops waiting.
   */
  public static long threads(String prefix, long expected) throws InterruptedException {
    long deadline = System.nanoTime() + LIMIT.toNanos();
    long n = liveThreads(prefix);
    while (n != expected && System.nanoTime() < deadline) {
      Optional<Thread> ending = n < expected ? Optional.empty() : Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).findAny();
      if (ending.isPresent()) {
        ending.get().join(POLL_MILLIS);
      } else {
        Thread.sleep(POLL_MILLIS); // one not started yet
      }
      n = liveThreads(prefix);
    }
    return n;
  }

  /** Waits until {@code count} gives {@code expected}; returns what it gives when it stops waiting. */
  public static long count(LongSupplier count, long expected) throws InterruptedException {
    until(() -> count.getAsLong() == expected);
    return count.getAsLong();
  }

  /** Waits until {@code condition} holds; whether it does when it stops waiting. */
  public static boolean until(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + LIMIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
    }
    return true;
  }
}
