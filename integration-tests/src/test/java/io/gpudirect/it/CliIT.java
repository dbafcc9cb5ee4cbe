package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.LoginTries;
import io.gpudirect.server.ManualLoginClock;
import io.gpudirect.testing.ChildProcess;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.testing.SparkJvmFlags;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@code gpudirect server}, {@code ls} and {@code cat} as separate processes, as a user runs them. */
// On the Spark 3.5 line only (spark35-line): the CLI ships in that build (bin/gpudirect), and its
// child JVMs run the server, ls and cat, which have no Spark in them.
@Tag("spark35-line")
class CliIT {
  /** Far beyond a child JVM's start on a loaded machine: a bound on a hang, not a verdict. */
  private static final Duration STARTS_WITHIN = Duration.ofSeconds(120);
  private static final Pattern LISTENING = Pattern.compile("gpudirect server listening on (\\S+):(\\d+)");

  @TempDir
  Path tmp;

  @Test
  void serverLsAndCat() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    byte[] data = new byte[9 * 1024 * 1024 + 17];
    new Random(3).nextBytes(data);
    Files.createDirectories(root.resolve("d"));
    Files.write(root.resolve("d/blob.bin"), data);
    Files.writeString(root.resolve("d/small.txt"), "hello\n");

    ChildProcess server = ChildProcess.start("gpudirect server", cli("server", "--root", root.toString(), "--port", "0"));
    try {
      Matcher m = server.awaitLine(LISTENING, STARTS_WITHIN);
      String base = "gpudirect://127.0.0.1:" + m.group(2);

      Process ls = cli("ls", base + "/d").start();
      String listing = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), listing);
      assertTrue(listing.contains(data.length + "  " + base + "/d/blob.bin"), listing);
      assertTrue(listing.contains("6  " + base + "/d/small.txt"), listing);

      Process cat = cli("cat", "--buffer-size", "1048576", base + "/d/blob.bin").start();
      byte[] copied = cat.getInputStream().readAllBytes();
      assertTrue(cat.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, cat.exitValue());
      assertArrayEquals(data, copied);

      Process missing = cli("cat", base + "/d/nope.bin").redirectErrorStream(true).start();
      String error = new String(missing.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(missing.waitFor(60, TimeUnit.SECONDS));
      assertEquals(1, missing.exitValue(), error);
      // Told as the user's own action on the file, not as the client's internal stat.
      assertTrue(error.startsWith("gpudirect: Cannot access 'd/nope.bin' on gpudirect server 127.0.0.1:"
          + m.group(2) + ": "), error);
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  /**
   * {@code cat} of a file that changes while it is copied: the test reads the first megabyte
   * of its output (cat blocks on the pipe until then, with at most the next buffers fetched),
   * changes the file, and reads the rest. What cat wrote is a prefix of the old file, never
   * bytes of the new one; it exits 1 and says which file changed.
   */
  @ParameterizedTest
  @EnumSource(FileChanges.class)
  void catOfAFileThatChangesFailsAndWritesOnlyOldBytes(FileChanges change) throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    byte[] data = FileChanges.writeSettled(root.resolve("live.bin"), 16 << 20, 21);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      Process cat = cli("cat", "--buffer-size", "1048576",
          "gpudirect://127.0.0.1:" + server.port() + "/live.bin").start();
      byte[] first = cat.getInputStream().readNBytes(1 << 20);
      change.apply(root.resolve("live.bin"), 22);
      byte[] rest = cat.getInputStream().readAllBytes();
      String error = new String(cat.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(cat.waitFor(60, TimeUnit.SECONDS));
      assertEquals(1, cat.exitValue(), change + ": " + error);
      byte[] written = Arrays.copyOf(first, first.length + rest.length);
      System.arraycopy(rest, 0, written, first.length, rest.length);
      assertTrue(written.length >= 1 << 20 && written.length < data.length, change + ": " + written.length);
      assertArrayEquals(Arrays.copyOf(data, written.length), written, change + ": only old bytes");
      assertTrue(error.contains("live.bin") && error.contains("changed"), error);
    }
  }

  @Test
  void theSecretIsNeverTakenFromTheCommandLine() throws Exception {
    Process help = cli("server", "--help").redirectErrorStream(true).start();
    String usage = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(help.waitFor(60, TimeUnit.SECONDS));
    assertTrue(usage.contains("--secret-file"), usage);
    assertTrue(!Pattern.compile("--secret[ =]").matcher(usage).find()
        && !usage.contains("--auth-secret"), "no option takes the secret itself: " + usage);
    for (String[] args : new String[][] {
        {"server", "--root", tmp.toString(), "--port", "0", "--secret", "hunter2"},
        {"ls", "--secret=hunter2", "gpudirect://127.0.0.1:1/x"}}) {
      Process p = cli(args).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
      assertEquals(1, p.exitValue(), out);
      assertTrue(out.contains("--secret is not accepted") && out.contains("--secret-file")
          && !out.contains("listening"), out);
      assertTrue(!out.contains("hunter2"), "the refusal does not echo the secret: " + out);
    }
  }

  /** The first mistakes of a new user, each told once, with the cause and what to do. */
  @Test
  void firstMistakesAreToldPlainly() throws Exception {
    int nothing;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      nothing = s.getLocalPort();
    }
    assertEquals("gpudirect: Cannot connect to gpudirect server 127.0.0.1:" + nothing + " after 4 attempts:"
        + " connection refused. Is a gpudirect server running there? (bin/gpudirect server --root DIR"
        + " --port " + nothing + ")", failure("ls", "gpudirect://127.0.0.1:" + nothing + "/"));

    Path missing = tmp.resolve("no-such-root");
    assertTrue(failure("server", "--root", missing.toString(), "--port", "0")
        .startsWith("gpudirect: Cannot serve root " + missing + ": it does not exist"));

    Path root = Files.createDirectories(tmp.resolve("root"));
    Path serverSecret = Files.writeString(tmp.resolve("server.secret"), "the-right-secret-of-the-server");
    Path clientSecret = Files.writeString(tmp.resolve("client.secret"), "a-wrong-secret-of-the-client");
    // Bound to every interface: the server knows itself as 0.0.0.0, the client dialled 127.0.0.1.
    ChildProcess server = ChildProcess.start("gpudirect server", cli("server", "--root", root.toString(), "--port",
        "0", "--bind", "0.0.0.0", "--secret-file", serverSecret.toString()));
    try {
      String port = awaitPort(server);
      assertEquals("gpudirect: Secret rejected by gpudirect server 127.0.0.1:" + port + ": the secret in"
          + " --secret-file FILE (or $GPUDIRECT_SECRET_FILE) is not the one the server was started with"
          + " (its --secret-file)",
          failure("ls", "--secret-file", clientSecret.toString(), "gpudirect://127.0.0.1:" + port + "/"));
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  /**
   * From an address backing off after failed logins, {@code ls} with the right secret is told
   * that the server is throttling, for how long, and that its secret was not checked (before:
   * that its secret was not the server's); once the wait is over it lists.
   */
  @Test
  void aThrottledLoginIsToldAsThrottlingWithItsWait() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.writeString(root.resolve("a.txt"), "throttled\n");
    byte[] secret = "the-right-secret-of-the-server".getBytes(StandardCharsets.UTF_8);
    Path secretFile = Files.write(tmp.resolve("client.secret"), secret);
    ManualLoginClock clock = new ManualLoginClock();
    try (ServerFixture fixture = ServerFixture.serve(root, secret, clock)) {
      int port = fixture.server.port();
      LoginTries.failFrom("127.0.0.1", port, LoginTries.FREE_FAILURES);
      String refused = failure("ls", "--secret-file", secretFile.toString(), fixture.uri(""));
      assertTrue(refused.startsWith("gpudirect: Gpudirect server 127.0.0.1:" + port
          + " is throttling logins from this client's address, so it did not check the secret in"
          + " --secret-file FILE (or $GPUDIRECT_SECRET_FILE): logins from 127.0.0.1 are refused for"
          + " another 1 s after " + LoginTries.FREE_FAILURES + " failed logins from that address"),
          refused);

      clock.advance(java.time.Duration.ofSeconds(1));
      Process ls = cli("ls", "--secret-file", secretFile.toString(), fixture.uri("")).start();
      String listing = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), listing);
      assertTrue(listing.contains("10  " + fixture.uri("a.txt")), listing);
    }
  }

  /** The first line a failing command prints; it must exit with 1. */
  private static String failure(String... args) throws Exception {
    Process p = cli(args).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(1, p.exitValue(), out);
    return out.lines().filter(l -> l.startsWith("gpudirect: ")).findFirst().orElse(out);
  }

  @Test
  void theServerRefusesAShortSecretFileAndWarnsAboutOneOthersCanRead() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path weak = Files.writeString(tmp.resolve("weak-secret"), "x\n");
    Process refused = cli("server", "--root", root.toString(), "--port", "0", "--secret-file", weak.toString())
        .redirectErrorStream(true).start();
    // A server that took the secret would serve until stopped: wait, then read what it said.
    boolean exited = refused.waitFor(60, TimeUnit.SECONDS);
    if (!exited) {
      refused.destroy();
      refused.waitFor(30, TimeUnit.SECONDS);
    }
    String out = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(exited, "the server started with a 1-byte secret: " + out);
    assertEquals(1, refused.exitValue(), out);
    assertTrue(out.contains("secret file " + weak + " holds 1 byte") && out.contains("at least 16")
        && out.contains("head -c 32 /dev/urandom | base64 > " + weak) && !out.contains("listening"), out);

    Path readable = Files.writeString(tmp.resolve("readable-secret"), "a-secret-of-more-than-16-bytes\n");
    Files.setPosixFilePermissions(readable, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    ProcessBuilder pb = cli("server", "--root", root.toString(), "--port", "0", "--secret-file", readable.toString());
    // As bin/gpudirect runs it: warnings shown.
    pb.command().add(1, "-Dlog4j2.configurationFile=" + Path.of("..", "bin", "log4j2-cli.properties").toAbsolutePath());
    ChildProcess server = ChildProcess.start("gpudirect server", pb);
    try {
      server.awaitLine(LISTENING, STARTS_WITHIN);
      String seen = server.output();
      assertTrue(seen.contains("Secret file " + readable + " can be read by every user of this host")
          && seen.contains("chmod 600 " + readable), seen);
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  @Test
  void serverAndLsOverTls() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.writeString(root.resolve("a.txt"), "over tls\n");
    io.gpudirect.testing.TestCertificates cert = io.gpudirect.testing.TestCertificates.create(tmp.resolve("keys"), "cli");
    ChildProcess server = ChildProcess.start("gpudirect server", cli("server", "--root", root.toString(), "--port", "0",
        "--tls-cert", cert.certificate().toString(), "--tls-key", cert.privateKey().toString()));
    try {
      String base = "gpudirect://127.0.0.1:" + awaitPort(server);
      Process ls = cli("ls", "--tls", "--tls-trust-store", cert.certificate().toString(), base + "/").start();
      String listing = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), listing);
      assertTrue(listing.contains("9  " + base + "/a.txt"), listing);

      Process plain = cli("cat", base + "/a.txt").redirectErrorStream(true).start();
      String error = new String(plain.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(plain.waitFor(60, TimeUnit.SECONDS));
      assertEquals(1, plain.exitValue(), error);
      assertTrue(error.contains("requires TLS") && error.contains("--tls"), error);
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  private static String awaitPort(ChildProcess server) throws InterruptedException {
    return server.awaitLine(LISTENING, STARTS_WITHIN).group(2);
  }

  /** The CLI in a child JVM with this test's classpath. */
  private static ProcessBuilder cli(String... args) {
    return ChildProcess.java(CliIT.class, SparkJvmFlags.FLAGS, "io.gpudirect.cli.GpuDirectCli", args);
  }
}
