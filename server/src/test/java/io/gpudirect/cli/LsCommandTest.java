package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.client.ListingLimitException;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.EndlessListingServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code gpudirect ls} in this JVM, against a real server and a hostile one on loopback. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LsCommandTest {
  private final PrintStream stdout = System.out;

  @AfterEach
  void restore() {
    System.setOut(stdout);
  }

  @Test
  void controlCharactersInNamesAreEscapedAndOtherLettersKept(@TempDir Path root) throws Exception {
    assumeTrue("UTF-8".equals(System.getProperty("sun.jnu.encoding")),
        "file names need a UTF-8 locale");
    // ESC ] 0 ; ... BEL retitles an xterm; the newline would forge a second line.
    Files.writeString(root.resolve("a\u001b]0;pwned\u0007\nété.txt"), "x");
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + s.port();
      Run run = ls(uri + "/");
      assertEquals(0, run.exit);
      assertEquals("             1  " + uri + "/a\\033]0;pwned\\a\\nété.txt\n", run.out);
    }
  }

  /**
   * Unicode's direction overrides and other invisible format characters reorder or hide what
   * follows them: bidi, U+202E, gnp.exe showed as bidiexe.png. Escaped, as control
   * characters are, by the octal of their UTF-8 bytes.
   */
  @Test
  void directionOverridesAndInvisibleCharactersInNamesAreEscaped(@TempDir Path root) throws Exception {
    assumeTrue("UTF-8".equals(System.getProperty("sun.jnu.encoding")),
        "file names need a UTF-8 locale");
    Files.writeString(root.resolve("bidi\u202egnp.exe"), "x");
    // Right-to-left isolate and mark, a zero-width space, a line separator, a tag character.
    Files.writeString(root.resolve("c\u2067\u200f\u200b\u2028\udb40\udc41.txt"), "y");
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + s.port();
      Run run = ls(uri + "/");
      assertEquals(0, run.exit);
      assertEquals("             1  " + uri + "/bidi\\342\\200\\256gnp.exe\n"
          + "             1  " + uri + "/c\\342\\201\\247\\342\\200\\217\\342\\200\\213\\342\\200\\250"
          + "\\363\\240\\201\\201.txt\n", run.out);
    }
  }

  @Test
  void aServerThatNeverEndsAListingIsRefusedAtTheLimit() throws Exception {
    try (EndlessListingServer hostile = new EndlessListingServer(5000, Duration.ZERO)) {
      Run run = ls("--max-entries", "50000", "gpudirect://127.0.0.1:" + hostile.port() + "/");
      assertEquals(1, run.exit);
      ListingLimitException e = assertInstanceOf(ListingLimitException.class, run.error);
      assertEquals(ListingLimitException.Limit.ENTRIES, e.limit());
      assertTrue(e.getMessage().contains("127.0.0.1:" + hostile.port())
          && e.getMessage().contains("more than 50000 entries")
          && e.getMessage().contains("--max-entries N"), e.getMessage());
      assertEquals("", run.out, "nothing printed from a listing that was refused");
    }
  }

  /** ls and cat run without Spark: their client settings are flags, and reach the block client. */
  @Test
  void theTransportFlagReachesTheClient(@TempDir Path root) throws Exception {
    Files.writeString(root.resolve("a.txt"), "x");
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + s.port() + "/";
      assertEquals(0, ls("--transport", "tcp", uri).exit);
      Run refused = ls("--transport", "carrier-pigeon", uri);
      assertEquals(1, refused.exit);
      assertTrue(refused.error.getMessage().contains("Unknown transport 'carrier-pigeon'"),
          refused.error.getMessage());
    }
  }

  /** An error message that names a path (or carries a server's words) is escaped too. */
  @Test
  void anErrorNamingAPathWithControlCharactersIsEscaped(@TempDir Path root) {
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + s.port();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      CommandLine cli = GpuDirectCli.commandLine();
      cli.setErr(new java.io.PrintWriter(err, true, StandardCharsets.UTF_8));
      assertEquals(1, cli.execute("ls", uri + "/gone%1B%5D0;pwned%07"));
      String printed = err.toString(StandardCharsets.UTF_8);
      assertTrue(printed.contains("gone\\033]0;pwned\\a") && !printed.contains("\u001b")
          && !printed.contains("\u0007"), printed);
    }
  }

  private record Run(int exit, String out, Throwable error) {}

  private static Run ls(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    AtomicReference<Throwable> error = new AtomicReference<>();
    CommandLine cli = GpuDirectCli.commandLine();
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      error.set(e);
      return 1;
    });
    String[] command = new String[args.length + 1];
    command[0] = "ls";
    System.arraycopy(args, 0, command, 1, args.length);
    int exit = cli.execute(command);
    return new Run(exit, out.toString(StandardCharsets.UTF_8), error.get());
  }
}
