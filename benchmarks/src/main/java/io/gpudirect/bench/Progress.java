package io.gpudirect.bench;

import java.io.PrintStream;

/**
 * A progress bar on stderr while the benchmark runs: steps done of steps planned, the step
 * under way and its seconds so far. Redrawn by a daemon thread so a long step still shows life,
 * and at each step, so the last frame is the last step's. Drawn only where someone watches:
 * on a terminal ({@link #onTerminal}); a file would keep every redraw.
 *
 * <p>Its plan must count exactly the steps that run, or the bar stops short: a step the run
 * leaves out after planning it (iperf3 gone, no GPU) is {@link #skip}ped.
 */
final class Progress implements AutoCloseable {
  private static final int WIDTH = 30;
  private final PrintStream err;
  private final boolean enabled;
  private final Thread painter;
  private volatile int total;
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

  /** On stderr when it is a terminal and the bar is {@code wanted}; silent otherwise. */
  static Progress onTerminal(int totalSteps, boolean wanted) {
    return new Progress(System.err, totalSteps, wanted && System.console() != null);
  }

  /** The steps of the whole run, once the run knows them (the first steps count among them). */
  void plan(int totalSteps) {
    total = Math.max(1, totalSteps);
    repaint();
  }

  /** Starts the next step. */
  void step(String what) {
    label = what;
    stepStart = System.nanoTime();
    repaint();
  }

  /** The current step is done. */
  void stepDone() {
    done = Math.min(total, done + 1);
    repaint();
  }

  /** A planned step that will not run: counted as done, so the bar still ends full. */
  void skip() {
    stepDone();
  }

  private void repaint() {
    if (enabled && !closed) {
      paint();
    }
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
    if (closed) {
      return; // the bar is cleared already
    }
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
