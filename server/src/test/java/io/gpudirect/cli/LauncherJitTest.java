package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The JIT each launcher gives a command's JVM: C1 alone for a plain {@code cat}, whose bytes go
 * through the kernel and CRC32C's intrinsic, so that C2's compiles cost it more than they return;
 * both tiers for a TLS {@code cat} (AES-GCM is slow until C2 compiles it) and for the server.
 * Each launcher is run with {@code -XX:+PrintFlagsFinal -version} among the user's JVM options,
 * so the JVM says which level it got and exits without running the command.
 */
class LauncherJitTest {
  private static final Pattern LEVEL = Pattern.compile("TieredStopAtLevel\\s+=\\s+(\\d+)");

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', value = {
      "src/main/package/bin/gpudirect | cat gpudirect://127.0.0.1:9/f.bin                          | 1",
      "src/main/package/bin/gpudirect | cat --tls gpudirect://127.0.0.1:9/f.bin                    | 4",
      "src/main/package/bin/gpudirect | cat gpudirect://127.0.0.1:9/f.bin --tls-trust-store ca.pem | 4",
      "src/main/package/bin/gpudirect | server --root .                                            | 4",
      "../bin/gpudirect               | cat gpudirect://127.0.0.1:9/f.bin                          | 1",
      "../bin/gpudirect               | cat --tls gpudirect://127.0.0.1:9/f.bin                    | 4",
      "../bin/gpudirect               | ls gpudirect://127.0.0.1:9/                                | 4"})
  void aPlainCatRunsWithC1AloneAndEverythingElseWithC2(String launcher, String command, int level)
      throws Exception {
    assertTrue(Files.isRegularFile(Path.of(launcher)), "no launcher at " + Path.of(launcher).toAbsolutePath());
    List<String> cmd = new ArrayList<>(List.of("bash", launcher));
    cmd.addAll(List.of(command.split(" ")));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
    pb.environment().put("GPUDIRECT_JAVA_OPTS", "-Xmx64m -XX:+PrintFlagsFinal -version");
    // The checkout's launcher builds nothing when given a class path whole.
    pb.environment().put("GPUDIRECT_CLASSPATH", "unused");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    Matcher m = LEVEL.matcher(out);
    assertTrue(m.find(), out);
    assertEquals(level, Integer.parseInt(m.group(1)), launcher + " " + command);
  }
}
