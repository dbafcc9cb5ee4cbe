package io.gpudirect.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Untimed work repeated until the JIT has settled: until one pass of it kept the compilers busy
 * for under {@link #SETTLED} of its time (their wall time, as {@link CompilationMXBean} counts
 * it), after at least a floor of seconds and at most a ceiling.
 *
 * <p>Why not a fixed number of seconds: our fetch's methods run once per 4 MiB chunk or once
 * per read, so C2 reaches them only after some 10^4 chunks, and every client made anew sends
 * the JIT's speculations back to the interpreter once or twice (a HELLO through code that had
 * seen only READs). After the 2 s the bench used to give it, the JIT was still compiling 10-30
 * s into a run on the 2-core VM, longer on a loaded one, so each timed run paid for the
 * compiles its own bytes set off (0.04-0.1 s per GB: docs/benchmarks-log.md, "CPU per byte
 * of the fetch"), a cost that a process keeping its clients, as an executor or a server
 * does, pays once.
 */
final class JitSettling {
  /** The share of a pass the compilers may still take once settled. */
  static final double SETTLED = 0.02;

  private final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();

  /** What warming took: seconds, passes, and the compilers' share of the last pass. */
  record Warmed(double seconds, int passes, double lastShare) {
    String describe() {
      return String.format(java.util.Locale.ROOT, "after %.0f s of untimed runs (%d), the JIT compiling %.0f%% of the last",
          seconds, passes, lastShare * 100);
    }
  }

  /** One untimed pass; {@code pass} counts from 0, so that a caller can vary what it runs. */
  @FunctionalInterface
  interface Pass {
    void run(int pass) throws Exception;
  }

  /** Runs {@code pass} until settled, at least {@code floorSeconds} and at most {@code ceilingSeconds}. */
  Warmed warm(double floorSeconds, double ceilingSeconds, Pass pass) throws Exception {
    long start = System.nanoTime();
    double share = 1;
    int n = 0;
    while (true) {
      long compiled = jit.getTotalCompilationTime();
      long t0 = System.nanoTime();
      pass.run(n++);
      double wallMillis = (System.nanoTime() - t0) / 1e6;
      share = wallMillis > 0 ? (jit.getTotalCompilationTime() - compiled) / wallMillis : 1;
      double elapsed = (System.nanoTime() - start) / 1e9;
      if (elapsed >= ceilingSeconds || (elapsed >= floorSeconds && share < SETTLED)) {
        return new Warmed(elapsed, n, share);
      }
    }
  }
}
