package io.gpudirect.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gpudirect} in a child JVM with this module's test classpath, as a user runs it: for
 * commands that write to the process's own stdout, serve until stopped, or may never end.
 */
final class ChildCli {
  private static final Path LAUNCHER = Path.of("src", "main", "package", "bin", "gpudirect");
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
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    command.add("-Xmx256m");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("io.gpudirect.cli.GpuDirectCli");
    command.addAll(Arrays.asList(args));
    return new ProcessBuilder(command);
  }

  /**
   * Reads a server's output until it says where it listens; returns the port. The rest of its
   * output is read on, and dropped, so that the server never blocks on a full pipe.
   */
  static int awaitPort(Process server) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null) {
      seen.append(line).append('\n');
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> {
          try {
            while (out.readLine() != null) {
              // dropped
            }
          } catch (java.io.IOException ignored) {
            // the server has gone
          }
        }, "server-output");
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(m.group(2));
      }
    }
    throw new AssertionError("the server ended without printing its address: " + seen);
  }
}
