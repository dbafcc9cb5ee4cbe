package io.gpudirect;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The thread factories of every pool and timer we start. Their threads are daemons, so that a
 * client or server embedded in a Spark executor or a user's JVM never holds that JVM open when
 * its owner forgets to close it. Each is named after its owner ({@code gpudirect-...}), so that a
 * thread dump says whose thread it is, and so do the benchmarks' per-thread CPU figures, which
 * group threads by name with the trailing number stripped: a name is part of what they measure.
 * Here, on the lowest floor, so that client, server and connector share one.
 */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** Daemons all named {@code name}: for a single thread, or a pool whose threads need no number. */
  public static ThreadFactory named(String name) {
    return r -> daemon(r, name);
  }

  /** Daemons named {@code prefix-1}, {@code prefix-2}, ...: each factory counts from 1 on its own. */
  public static ThreadFactory numbered(String prefix) {
    AtomicInteger made = new AtomicInteger();
    return r -> daemon(r, prefix + "-" + made.incrementAndGet());
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
