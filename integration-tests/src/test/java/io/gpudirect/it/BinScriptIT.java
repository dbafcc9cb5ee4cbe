package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.ChildProcess;
import io.gpudirect.testing.TestData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/gpudirect} itself, run as a user runs it: from a directory of their own, under
 * {@code LANG=C}. The script is given this test's classpath (GPUDIRECT_CLASSPATH) so that it
 * builds nothing.
 */
// On the Spark 3.5 line only (spark35-line): the script runs the default build, and what it runs
// here (server, ls) has no Spark in it.
@Tag("spark35-line")
class BinScriptIT {
  private static final Pattern LISTENING = Pattern.compile("gpudirect server listening on (\\S+):(\\d+)");
  private static final Pattern SERVING = Pattern.compile("^serving ");
  /** Far beyond a child JVM's start on a loaded machine: a bound on a hang, not a verdict. */
  private static final Duration STARTS_WITHIN = Duration.ofSeconds(120);
  private static final String TRANSPORT_LINE = "transport: TCP (";
  /** A file name no ASCII locale can decode. */
  private static final String NAME = "tarifs-été-東京.txt";

  @TempDir
  Path caller;

  @Test
  void relativePathsAreTheCallersAndNamesAreUtf8UnderTheCLocale() throws Exception {
    Path data = Files.createDirectories(caller.resolve("data"));
    Files.writeString(data.resolve(NAME), "12345\n");

    ChildProcess server = ChildProcess.start("bin/gpudirect server", script("server", "--root", "data", "--port", "0"));
    try {
      String base = "gpudirect://127.0.0.1:" + awaitPort(server);
      // The line after the address says what is served.
      server.awaitLine(SERVING, STARTS_WITHIN);
      String startup = server.output();
      assertTrue(startup.contains("serving " + data.toAbsolutePath().normalize()), "--root data is the caller's data: " + startup);

      Process ls = script("ls", base + "/").start();
      String listing = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String err = new String(ls.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(120, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), listing + err);
      assertTrue(listing.contains("6  " + base + "/" + NAME), "the name as it is on disk: " + listing);

      // Without RDMA the server says why once, in what it serves, without the install recipe;
      // ls, which did not ask how its bytes travel, says nothing of it.
      assertEquals(1, count(startup, "(no rdma: "), startup);
      assertEquals(0, count(startup, TRANSPORT_LINE), startup);
      assertFalse(startup.contains("apt-get install"), startup);
      assertEquals("", err, "ls wrote on stderr");
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  @Test
  void aRelativeSecretFileIsTheCallers() throws Exception {
    Files.createDirectories(caller.resolve("data"));
    Files.writeString(caller.resolve("secret"), "a secret of thirty-two bytes, ok");
    ChildProcess server = ChildProcess.start("bin/gpudirect server",
        script("server", "--root", "data", "--port", "0", "--secret-file", "secret"));
    try {
      String base = "gpudirect://127.0.0.1:" + awaitPort(server);
      Process ls = script("ls", "--secret-file", "secret", base + "/").redirectErrorStream(true).start();
      String out = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(120, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), out);
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }

  /** The checkout's bin/gpudirect, run in the caller's directory under the C locale. */
  private ProcessBuilder script(String... args) {
    Path bin = TestData.repository().resolve("bin/gpudirect");
    ProcessBuilder pb = new ProcessBuilder();
    pb.command().add("bash");
    pb.command().add(bin.toString());
    pb.command().addAll(List.of(args));
    pb.directory(caller.toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("LC_"));
    env.put("LANG", "C");
    env.put("GPUDIRECT_CLASSPATH", System.getProperty("java.class.path"));
    env.put("GPUDIRECT_JAVA_OPTS", "-Xmx512m");
    env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    return pb;
  }

  private static int awaitPort(ChildProcess server) throws InterruptedException {
    return Integer.parseInt(server.awaitLine(LISTENING, STARTS_WITHIN).group(2));
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}
