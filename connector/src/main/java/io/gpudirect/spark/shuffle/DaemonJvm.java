package io.gpudirect.spark.shuffle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.launcher.JavaModuleOptions;

/**
 * One daemon of a {@link StandaloneCluster}, its Master or a Worker, in a JVM of its own run from
 * this JVM's class path, its stdout and stderr in a log file: a daemon prints for as long as it
 * runs, so its output is kept on disk rather than in this JVM, and every failure names that file
 * and quotes its last lines. Stopping it stops what it started too (a Worker's executors).
 */
final class DaemonJvm {
  private static final int TAIL_LINES = 20;

  private final String name;
  private final Path log;
  private final Process process;

  private DaemonJvm(String name, Path log, Process process) {
    this.name = name;
    this.log = log;
    this.process = process;
  }

  /**
   * Starts {@code main} with {@code args}, behind {@code prefix} (a command that runs the JVM
   * elsewhere, {@code ip netns exec NS} say; empty for none), with {@code env} added to this
   * process's environment; {@code name} says what it is in messages.
   */
  static DaemonJvm start(String name, List<String> prefix, Class<?> main, List<String> args, Map<String, String> env,
      Path log, Path log4jConfig) {
    List<String> command = new ArrayList<>(prefix);
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // What Spark's own scripts give its daemons on Java 17.
    command.addAll(Arrays.asList(JavaModuleOptions.defaultModuleOptions().trim().split("\\s+")));
    // A daemon does little work: a small heap, and no C2 compiler taking the cores from the executors.
    command.addAll(List.of("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dlog4j2.configurationFile=" + log4jConfig.toUri()));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    builder.environment().putAll(env);
    try {
      return new DaemonJvm(name, log, builder.start());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + name + " (" + String.join(" ", command.subList(0,
          prefix.size() + 1)) + "): " + e.getMessage(), e);
    }
  }

  /**
   * The first line of its log in which {@code pattern} is found, as a matcher of it, waiting up to
   * {@code within}; fails naming the log and quoting its last lines if the daemon ends or the time
   * runs out first.
   */
  Matcher awaitLine(Pattern pattern, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      boolean alive = process.isAlive();
      // Read after the liveness check: a daemon that printed the line and then ended is still found.
      for (String line : lines()) {
        Matcher m = pattern.matcher(line);
        if (m.find()) {
          return m;
        }
      }
      if (!alive || System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " did not log '" + pattern + "' within " + within.toSeconds()
            + " s; " + describe());
      }
      Thread.sleep(100);
    }
  }

  /** Its process, as the OS knows it (its descendants: a Worker's executors). */
  ProcessHandle handle() {
    return process.toHandle();
  }

  /**
   * Asks it to stop (SIGTERM: a Worker then kills its executors), waits up to {@code grace}, then
   * kills it and whatever it started that is left.
   */
  void stop(Duration grace) {
    List<ProcessHandle> started = process.descendants().toList();
    process.destroy();
    try {
      if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    } finally {
      started.forEach(ProcessHandle::destroyForcibly);
    }
  }

  /** At JVM exit, when nothing else stopped it: kills it and what it started, waiting for nothing. */
  void kill() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
  }

  /** What it is, how it ended (or that it runs), its log and the log's last lines, for messages. */
  String describe() {
    String state = process.isAlive() ? "running" : "exited with " + process.exitValue();
    return name + " (" + state + "), log " + tail(log);
  }

  /** {@code file}, and its last lines. */
  static String tail(Path file) {
    List<String> lines = lines(file);
    return file + "; its last lines:\n  "
        + String.join("\n  ", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
  }

  @Override
  public String toString() {
    return name;
  }

  private List<String> lines() {
    return lines(log);
  }

  private static List<String> lines(Path file) {
    try {
      return Arrays.asList(new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n"));
    } catch (IOException e) {
      return List.of("(cannot read " + file + ": " + e.getMessage() + ")");
    }
  }
}
