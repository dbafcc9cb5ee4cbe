package io.gpudirect.verbs.ucx;

import io.gpudirect.testing.TestClassPath;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Java program in a process of its own, on the tests' class path, whose output is kept: what
 * the fuzz tests attack runs here, so that a crash in native code (UCX) fails the test with the
 * process's exit code and last lines instead of taking the build's JVM down.
 */
final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
  private final Thread reader;

  ChildJvm(Class<?> main, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-XX:MaxDirectMemorySize=1g", "-cp", TestClassPath.of(ChildJvm.class),
        main.getName()));
    command.addAll(List.of(args));
    process = new ProcessBuilder(command).redirectErrorStream(true).start();
    reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          lines.add(line);
        }
      } catch (IOException e) {
        // the process is gone
      }
    }, "child-jvm-output");
    reader.setDaemon(true);
    reader.start();
  }

  /** The first line starting with {@code prefix}, waiting up to {@code seconds} for it. */
  String awaitLine(String prefix, long seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      synchronized (lines) {
        for (String l : lines) {
          if (l.startsWith(prefix)) {
            return l;
          }
        }
      }
      if (!process.isAlive()) {
        break;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no line starting with '" + prefix + "' from " + describe());
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Waits for the exit; its code, or -1 when still running after {@code seconds}. */
  int awaitExit(long seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      return -1;
    }
    reader.join(5000);
    return process.exitValue();
  }

  /** Exit state and the last lines of output, for assertion messages. */
  String describe() {
    String state = process.isAlive() ? "running" : "exited with " + process.exitValue()
        + (process.exitValue() == 134 ? " (SIGABRT: a native crash)" : "");
    List<String> tail;
    synchronized (lines) {
      tail = new ArrayList<>(lines.subList(Math.max(0, lines.size() - 25), lines.size()));
    }
    return "child JVM " + state + "; its last lines:\n  " + String.join("\n  ", tail);
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
