package io.gpudirect.cli;

import io.gpudirect.testing.ChildProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gpudirect} in a child JVM with this module's test classpath, as a user runs it: for
 * commands that write to the process's own stdout, serve until stopped, or may never end.
 */
final class ChildCli {
  private static final Path LAUNCHER = Path.of("src", "main", "package", "bin", "gpudirect");
  /** Far beyond a child JVM's start on a loaded machine (tens of seconds): a bound on a hang, not a verdict. */
  private static final Duration STARTS_WITHIN = Duration.ofSeconds(120);
  private static final Pattern LISTENING = Pattern.compile("gpudirect server listening on (\\S+):(\\d+)");

  private ChildCli() {}

  static ProcessBuilder of(String... args) {
    return of(List.of(), args);
  }

  /**
   * As {@link #of}, with the flags the package's launcher gives the JVM (its {@code opens} line):
   * for what its output is on a storage host, where a JVM without them says what it lacks.
   */
  static ProcessBuilder packaged(String... args) throws IOException {
    Matcher opens = Pattern.compile("(?m)^opens=\"([^\"]*)\"").matcher(Files.readString(LAUNCHER));
    if (!opens.find()) {
      throw new AssertionError("no opens=\"...\" line in " + LAUNCHER);
    }
    return of(List.of(opens.group(1).split(" ")), args);
  }

  private static ProcessBuilder of(List<String> jvmFlags, String... args) {
    List<String> flags = new ArrayList<>(jvmFlags);
    flags.add("-Xmx256m");
    return ChildProcess.java(ChildCli.class, flags, "io.gpudirect.cli.GpuDirectCli", args);
  }

  /** Waits until a server says where it listens; returns the port. */
  static int awaitPort(ChildProcess server) throws InterruptedException {
    return Integer.parseInt(server.awaitLine(LISTENING, STARTS_WITHIN).group(2));
  }
}
