package io.gpudirect.bench;

import java.io.PrintStream;

/**
 * A progress bar on stderr while the benchmark runs: steps done of steps planned, the step
 * under way and its seconds so far. Redrawn by a daemon thread so a long step still shows life;
 * silent when {@code enabled} is false (tests, or stderr not wanted).
 */
final class Progress implements AutoCloseable {
  private static final int WIDTH = 30;
  private final PrintStream err;
  private final boolean enabled;
  private final int total;
  private final Thread painter;
  private volatile int done;
  private volatile String label = "starting";
  private volatile long stepStart = System.nanoTime();
  private volatile boolean closed;

  Progress(PrintStream err, int totalSteps, boolean enabled) {
    this.err = err;
    this.total = Math.max(1, totalSteps);
    this.enabled = enabled;
    this.painter = new Thread(this::paintLoop, "gpudirect-bench-progress");
    this.painter.setDaemon(true);
    if (enabled) {
      painter.start();
    }
  }

  /** Starts the next step. */
  void step(String what) {
    label = what;
    stepStart = System.nanoTime();
  }

  /** The current step is done. */
  void stepDone() {
    done = Math.min(total, done + 1);
  }

  private void paintLoop() {
    while (!closed) {
      paint();
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private synchronized void paint() {
    int filled = done * WIDTH / total;
    String bar = "#".repeat(filled) + ".".repeat(WIDTH - filled);
    double seconds = (System.nanoTime() - stepStart) / 1e9;
    String line = String.format("\r[%s] %3d%% %-44.44s %5.1f s", bar, done * 100 / total, label, seconds);
    err.print(line);
    err.flush();
  }

  @Override
  public void close() {
    closed = true;
    painter.interrupt();
    if (enabled) {
      synchronized (this) {
        err.print("\r" + " ".repeat(WIDTH + 62) + "\r");
        err.flush();
      }
    }
  }
}
