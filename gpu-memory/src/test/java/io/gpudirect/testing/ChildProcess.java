package io.gpudirect.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A process a test starts (a Java program on the test's class path, a script), its output,
 * stdout and stderr together, read as it comes and kept: the child never blocks on a full pipe,
 * a test waits for a line with a bound (and at once learns when the child ended without it), and
 * a failure says how the child ended and what it last printed. Closing it kills the process.
 */
public final class ChildProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final List<String> lines = new ArrayList<>();
  private final Thread reader;

  private ChildProcess(String name, Process process) {
    this.name = name;
    this.process = process;
    reader = new Thread(this::readOutput, "child-process-output");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * The command that runs {@code main} in a JVM of its own: this JVM's {@code java}, then
   * {@code jvmFlags}, the class path that loaded {@code test}, {@code main} and {@code args}.
   */
  public static ProcessBuilder java(Class<?> test, List<String> jvmFlags, String main, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    command.add("-cp");
    command.add(TestClassPath.of(test));
    command.add(main);
    command.addAll(List.of(args));
    return new ProcessBuilder(command);
  }

  /** Starts {@code command} with its stderr joined to its stdout; {@code name} says what it is in messages. */
  public static ChildProcess start(String name, ProcessBuilder command) {
    try {
      return new ChildProcess(name, command.redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + name + ": " + command.command(), e);
    }
  }

  private void readOutput() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        synchronized (lines) {
          lines.add(line);
          lines.notifyAll();
        }
      }
    } catch (IOException e) {
      // the process is gone, or its output was closed by destroy()
    } finally {
      synchronized (lines) {
        lines.notifyAll();
      }
    }
  }

  /**
   * The first line in which {@code pattern} is found, as a matcher of it, waiting up to
   * {@code within}; fails, saying what the child printed, if it ends or the time runs out first.
   */
  public Matcher awaitLine(Pattern pattern, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    synchronized (lines) {
      for (int seen = 0; ; ) {
        for (; seen < lines.size(); seen++) {
          Matcher m = pattern.matcher(lines.get(seen));
          if (m.find()) {
            return m;
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || !reader.isAlive()) {
          if (!reader.isAlive()) {
            // its output ended: the exit follows, and the message should say how it went
            process.waitFor(5, TimeUnit.SECONDS);
          }
          throw new AssertionError("no line with '" + pattern + "' within " + within.toSeconds() + " s from "
              + describe());
        }
        TimeUnit.NANOSECONDS.timedWait(lines, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
    }
  }

  /** The first line starting with {@code prefix}, waiting up to {@code within} (as {@link #awaitLine(Pattern, Duration)}). */
  public String awaitLine(String prefix, Duration within) throws InterruptedException {
    return awaitLine(Pattern.compile("^" + Pattern.quote(prefix) + ".*"), within).group();
  }

  /** Everything it printed so far, a line each. */
  public String output() {
    synchronized (lines) {
      return lines.isEmpty() ? "" : String.join("\n", lines) + "\n";
    }
  }

  /** The process, for what the OS says of it (its CPU time, say). */
  public ProcessHandle handle() {
    return process.toHandle();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Waits for the exit, and for its output to be read to the end; its code, or -1 when still running after {@code within}. */
  public int awaitExit(Duration within) throws InterruptedException {
    if (!process.waitFor(within.toNanos(), TimeUnit.NANOSECONDS)) {
      return -1;
    }
    reader.join(5000);
    return process.exitValue();
  }

  /** Asks it to stop (SIGTERM) and waits up to {@code within}; whether it stopped. */
  public boolean stop(Duration within) throws InterruptedException {
    process.destroy();
    return process.waitFor(within.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** How it ended (or that it runs) and its last lines, for assertion messages. */
  public String describe() {
    String state = process.isAlive() ? "running" : "exited with " + process.exitValue()
        + (process.exitValue() == 134 ? " (SIGABRT: a native crash)" : "");
    List<String> tail;
    synchronized (lines) {
      tail = new ArrayList<>(lines.subList(Math.max(0, lines.size() - 25), lines.size()));
    }
    return name + " " + state + "; its last lines:\n  " + String.join("\n  ", tail);
  }

  /** Kills it at once (SIGKILL) and waits for it to go: a process that dies, not one that shuts down. */
  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }
}
