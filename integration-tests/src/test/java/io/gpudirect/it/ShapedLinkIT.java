package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.testing.TestData;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code dev/shaped-link}, the test bed of a shaped link between two network namespaces (three
 * with {@code --switch}), leaves no namespace behind: after a run that ends normally, and after
 * one interrupted while the client is fetching. It needs root (CI runs as root); where namespaces cannot be made, the
 * tests are skipped and say why. The bed's measurements are not checked here: they depend on
 * the machine, and docs/benchmarks.md records them.
 */
// On the Spark 3.5 line only (spark35-line): the bed runs the CLI of the default build (its server
// and cat, not the --shuffle bench).
@Tag("spark35-line")
class ShapedLinkIT {
  private static final Pattern NAMES = Pattern.compile("shaped-link: namespaces (\\S+(?: \\S+)+)$");

  @BeforeAll
  static void namespacesCanBeMade() throws Exception {
    String probe = "gd-probe-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
    boolean made = run("ip", "netns", "add", probe) == 0;
    if (made) {
      run("ip", "netns", "del", probe);
    }
    assumeTrue(made, "skipped: `ip netns add` is not permitted here (needs root with CAP_SYS_ADMIN"
        + " and iproute2), so dev/shaped-link cannot run");
  }

  @Test
  void aCompleteRunRemovesItsNamespaces() throws Exception {
    Process bed = bed("--size", "8m", "--streams", "1", "--rounds", "1", "--no-iperf").start();
    BufferedReader out = reader(bed);
    String[] names = awaitNames(out);
    String rest = readAll(out);
    assertTrue(bed.waitFor(300, TimeUnit.SECONDS), "the bed finishes: " + rest);
    assertEquals(0, bed.exitValue(), rest);
    assertTrue(rest.contains("ours           1"), "the gpudirect run took place: " + rest);
    assertGone(names);
  }

  @Test
  void aRunThroughASwitchRemovesItsThreeNamespaces() throws Exception {
    Process bed = bed("--switch", "--server-qdisc", "pfifo", "--size", "8m", "--streams", "1",
        "--rounds", "1", "--no-iperf").start();
    BufferedReader out = reader(bed);
    String[] names = awaitNames(out);
    assertEquals(3, names.length, "server, switch and client: " + String.join(" ", names));
    String rest = readAll(out);
    assertTrue(bed.waitFor(300, TimeUnit.SECONDS), "the bed finishes: " + rest);
    assertEquals(0, bed.exitValue(), rest);
    assertTrue(rest.contains("server's veth qdisc pfifo"), "the server's qdisc is reported: " + rest);
    assertTrue(rest.contains("ours           1"), "the gpudirect run, through the switch: " + rest);
    assertGone(names);
  }

  @Test
  void anInterruptedRunRemovesItsNamespaces() throws Exception {
    // Slow enough that the client is still fetching when the interrupt comes.
    Process bed = bed("--rate", "50mbit", "--size", "1g", "--streams", "1", "--rounds", "1", "--no-iperf").start();
    BufferedReader out = reader(bed);
    String[] names = awaitNames(out);
    String line;
    while ((line = out.readLine()) != null && !line.startsWith("run ")) {
      // up to the table's header, printed once the server listens in its namespace
    }
    assertNotNull(line, "the bed printed its table header");
    assertTrue(namespaces().contains(names[names.length - 1]), "the client's namespace exists while it runs");
    Thread.sleep(2000);
    // Ctrl-C, as a user would stop it; SIGTERM where this JVM was started with SIGINT ignored (by a
    // shell without job control running it in the background, or nohup): the bed inherits that,
    // and a shell cannot trap a signal ignored at its start, so Ctrl-C could not reach it either.
    boolean interruptible = !sigintIgnored();
    String signal = interruptible ? "-INT" : "-TERM";
    assertEquals(0, run("kill", signal, Long.toString(bed.pid())));
    String rest = readAll(out);
    assertTrue(bed.waitFor(120, TimeUnit.SECONDS), "the bed ends on SIG" + signal.substring(1) + ": " + rest);
    assertEquals(interruptible ? 130 : 143, bed.exitValue(), rest);
    assertGone(names);
  }

  /** Whether this process ignores SIGINT (signal 2: bit 1 of SigIgn in /proc/self/status). */
  private static boolean sigintIgnored() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("SigIgn:")) {
        return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & 0x2) != 0;
      }
    }
    return false;
  }

  private static void assertGone(String[] names) throws Exception {
    String listed = namespaces();
    for (String name : names) {
      assertFalse(listed.contains(name), name + " is left behind: " + listed);
    }
  }

  /** The checkout's dev/shaped-link, running this test's classpath, so that nothing is built. */
  private static ProcessBuilder bed(String... args) {
    Path script = TestData.repository().resolve("dev/shaped-link");
    ProcessBuilder pb = new ProcessBuilder();
    pb.command().add("bash");
    pb.command().add(script.toString());
    pb.command().addAll(List.of(args));
    pb.redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("GPUDIRECT_CLASSPATH", System.getProperty("java.class.path"));
    env.put("GPUDIRECT_JAVA_OPTS", "-Xmx512m");
    env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    return pb;
  }

  private static String[] awaitNames(BufferedReader out) throws IOException {
    StringBuilder seen = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null) {
      seen.append(line).append('\n');
      Matcher m = NAMES.matcher(line);
      if (m.find()) {
        return m.group(1).split(" ");
      }
    }
    throw new AssertionError("the bed ended without naming its namespaces: " + seen);
  }

  private static String namespaces() throws Exception {
    Process p = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return out;
  }

  private static int run(String... command) throws Exception {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    } catch (IOException e) {
      return -1; // no such command
    }
  }

  private static BufferedReader reader(Process p) {
    return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
  }

  private static String readAll(BufferedReader out) throws IOException {
    StringBuilder all = new StringBuilder();
    String line;
    while ((line = out.readLine()) != null) {
      all.append(line).append('\n');
    }
    return all.toString();
  }
}
