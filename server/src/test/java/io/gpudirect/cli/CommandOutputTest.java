package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.server.BlockServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What each command prints, in a child JVM with the package's logging and flags, as a user sees it: each
 * thing said once, on the stream it belongs to, and nothing a command was not asked about.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CommandOutputTest {
  private static final Path QUICKSTART = Path.of("..", "docs", "quickstart.md");

  @TempDir Path root;
  @TempDir Path tmp;

  /** ls, cat and --status did not ask how the bytes travel: they print their answer and nothing else. */
  @Test
  void lsCatAndStatusPrintNothingOnStderr() throws Exception {
    Files.writeString(root.resolve("a.txt"), "hello");
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + s.port();
      for (List<String> command : List.of(List.of("ls", uri + "/"), List.of("cat", uri + "/a.txt"),
          List.of("server", "--status", uri))) {
        Output run = run(command.toArray(new String[0]));
        assertEquals(0, run.exit, run.toString());
        assertEquals("", run.err, String.join(" ", command) + " wrote on stderr");
        assertFalse(run.out.isEmpty(), run.toString());
      }
    }
  }

  /** doctor's report begins the output: no log line before it repeats its GPU row. */
  @Test
  void doctorBeginsWithItsReport() throws Exception {
    Output run = run("doctor");
    assertTrue(run.out.startsWith("gpudirect doctor on "), run.toString());
    assertFalse(run.err.contains(" INFO "), run.err);
  }

  /**
   * The server says where it listens, what it serves, that it drains and that it stopped with
   * its counters, each once, on stdout; its log on stderr has nothing to add on a plain start.
   */
  @Test
  void theServerSaysEachThingOnce() throws Exception {
    Files.writeString(root.resolve("a.txt"), "hello");
    Path out = tmp.resolve("out");
    Path err = tmp.resolve("err");
    Process server = ChildCli.packaged("server", "--root", root.toString(), "--port", "0")
        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      int port = awaitPort(out);
      assertEquals(0, run("cat", "gpudirect://127.0.0.1:" + port + "/a.txt").exit);
    } finally {
      server.destroy();
      assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the server stops on SIGTERM");
    }
    String printed = Files.readString(out) + Files.readString(err);
    assertEquals(1, count(printed, "bytesSent"), printed);
    assertEquals(1, count(printed, "serving "), printed);
    assertEquals("", Files.readString(err), "stdout said it all:\n" + printed);
    assertTrue(Files.readString(out).contains("stopped: {bytesSent=5"), printed);
  }

  /** What docs/quickstart.md shows the server printing, is what it prints (on a host without RDMA). */
  @Test
  void theServerPrintsWhatTheQuickstartShows() throws Exception {
    String doc = Files.readString(QUICKSTART, StandardCharsets.UTF_8);
    Matcher shown = Pattern.compile("It prints, once ready[^\\n]*\\n(?:[^\\n]*\\n)*?\\n```\\n(.*?)```", Pattern.DOTALL)
        .matcher(doc);
    assertTrue(shown.find(), "the server's output in " + QUICKSTART);
    Path secret = Files.writeString(tmp.resolve("secret"), "a quickstart secret, long enough");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    Path out = tmp.resolve("out");
    Path err = tmp.resolve("err");
    Process server = ChildCli.packaged("server", "--root", root.toString(), "--bind", "127.0.0.1", "--port", "0",
        "--secret-file", secret.toString()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    String printed;
    try {
      int port = awaitPort(out);
      printed = awaitLines(out, 2);
      assumeTrue(printed.contains("(no rdma: "), "the quickstart shows a host without RDMA: " + printed);
      String expected = Pattern.quote(shown.group(1).replace("0.0.0.0:7337", "127.0.0.1:" + port)
          .replace("/data/warehouse", root.toString()).strip())
          .replace("...", "\\E.*\\Q").replaceAll("\\(no rdma: [^)]*\\)", "(no rdma: \\\\E.*\\\\Q)");
      assertTrue(printed.strip().matches("(?s)" + expected), "quickstart.md shows\n" + shown.group(1)
          + "\nthe server printed\n" + printed);
      assertEquals("", Files.readString(err), "quickstart.md shows nothing on stderr");
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static int count(String text, String what) {
    return text.split(Pattern.quote(what), -1).length - 1;
  }

  private static int awaitPort(Path out) throws Exception {
    Matcher m = Pattern.compile("gpudirect server listening on \\S+:(\\d+)").matcher(awaitLines(out, 1));
    assertTrue(m.find());
    return Integer.parseInt(m.group(1));
  }

  /** The first {@code lines} lines a child wrote to {@code out}, once there (within 60 s). */
  private static String awaitLines(Path out, int lines) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      String text = Files.readString(out);
      if (text.lines().count() >= lines && text.endsWith("\n")) {
        return String.join("\n", text.lines().limit(lines).toList()) + "\n";
      }
      Thread.sleep(50);
    }
    throw new AssertionError("fewer than " + lines + " lines within 60 s: " + Files.readString(out));
  }

  private Output run(String... args) throws Exception {
    Path out = Files.createTempFile(tmp, "out", "");
    Path err = Files.createTempFile(tmp, "err", "");
    Process p = ChildCli.packaged(args).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", args) + " ended");
    return new Output(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  private record Output(int exit, String out, String err) {}
}
