package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.TestData;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/gpudirect} itself, run as a user runs it: from a directory of their own, under
 * {@code LANG=C}. The script is given this test's classpath (GPUDIRECT_CLASSPATH) so that it
 * builds nothing.
 */
class BinScriptIT {
  private static final Pattern LISTENING = Pattern.compile("gpudirect server listening on (\\S+):(\\d+)");
  private static final String TRANSPORT_LINE = "transport: TCP (";
  /** A file name no ASCII locale can decode. */
  private static final String NAME = "tarifs-été-東京.txt";

  @TempDir
  Path caller;

  @Test
  void relativePathsAreTheCallersAndNamesAreUtf8UnderTheCLocale() throws Exception {
    Path data = Files.createDirectories(caller.resolve("data"));
    Files.writeString(data.resolve(NAME), "12345\n");

    Process server = script("server", "--root", "data", "--port", "0").redirectErrorStream(true).start();
    try {
      String[] started = awaitPort(server);
      String base = "gpudirect://127.0.0.1:" + started[0];
      String startup = started[1];
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
      server.destroy();
      assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the server stops on SIGTERM");
    }
  }

  @Test
  void aRelativeSecretFileIsTheCallers() throws Exception {
    Files.createDirectories(caller.resolve("data"));
    Files.writeString(caller.resolve("secret"), "a secret of thirty-two bytes, ok");
    Process server = script("server", "--root", "data", "--port", "0", "--secret-file", "secret")
        .redirectErrorStream(true).start();
    try {
      String base = "gpudirect://127.0.0.1:" + awaitPort(server)[0];
      Process ls = script("ls", "--secret-file", "secret", base + "/").redirectErrorStream(true).start();
      String out = new String(ls.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(ls.waitFor(120, TimeUnit.SECONDS));
      assertEquals(0, ls.exitValue(), out);
    } finally {
      server.destroy();
      assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the server stops on SIGTERM");
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

  /** The server's port and everything it printed up to and including its address. */
  private static String[] awaitPort(Process server) throws IOException {
    BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null) {
      seen.append(line).append('\n');
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        // The line after the address says what is served.
        String next = out.readLine();
        return new String[] {m.group(2), seen.append(next).append('\n').toString()};
      }
    }
    throw new AssertionError("the server ended without printing its address: " + seen);
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}
