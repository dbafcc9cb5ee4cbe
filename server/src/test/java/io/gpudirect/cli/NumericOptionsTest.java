package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every number of {@code ls}, {@code cat} and {@code server}, out of its range: refused before
 * anything is served or asked, by a message that names the option, what it accepts and what
 * was given (before: some were taken and spun or failed later with a message naming no option,
 * some were said to be "not an int" for a size written as 1k, {@code --max-connections} did
 * not exist).
 */
class NumericOptionsTest {
  /** No server listens there: a command that got past its options would fail to connect instead. */
  static final String NOWHERE = "gpudirect://127.0.0.1:1/f.bin";

  @TempDir static Path root;

  static Stream<Arguments> outOfRange() {
    return Stream.of(
        refused("--streams must be a whole number from 1 to 256, not 0", "ls", "--streams", "0", NOWHERE),
        refused("--max-entries must be a whole number from 1 to 2147483647, not 0", "ls", "--max-entries", "0",
            NOWHERE),
        refused("--max-bytes-in-flight must be a size from 4m to 1g", "ls", "--max-bytes-in-flight", "1k", NOWHERE),
        refused("--max-bytes-in-flight must be a size from 4m to 1g", "ls", "--max-bytes-in-flight", "lots",
            NOWHERE),
        refused("--buffer-size must be a size from 4k to 1g", "cat", "--buffer-size", "0", NOWHERE),
        refused("--buffer-size must be a size from 4k to 1g", "cat", "--buffer-size", "3g", NOWHERE),
        refused("--buffers must be a whole number from 2 to 64, not 1", "cat", "--buffers", "1", NOWHERE),
        refused("--streams must be a whole number from 1 to 256, not 1000", "cat", "--streams", "1000", NOWHERE),
        refused("--port must be a whole number from 0 to 65535, not 70000", "server", "--port", "70000"),
        refused("--max-connections must be a whole number from 1 to 65536, not 0", "server", "--max-connections",
            "0"),
        refused("--shutdown-grace-seconds must be a whole number from 0 to 3600, not -1", "server",
            "--shutdown-grace-seconds", "-1"),
        refused("--handshake-timeout-seconds must be a whole number from 1 to 600, not 0", "server",
            "--handshake-timeout-seconds", "0"),
        refused("--max-unauthenticated must be a whole number from 1 to 65536, not 0", "server",
            "--max-unauthenticated", "0"),
        refused("--max-unauthenticated-per-address must be a whole number from 1 to 64, not 100", "server",
            "--max-unauthenticated-per-address", "100"),
        refused("--checksum-cache-mb must be a whole number from 0 to 65536, not -1", "server",
            "--checksum-cache-mb", "-1"),
        refused("--max-list-page-entries must be a whole number from 1 to 1000000, not 0", "server",
            "--max-list-page-entries", "0"),
        refused("--max-concurrent-listings must be a whole number from 1 to 1024, not 0", "server",
            "--max-concurrent-listings", "0"),
        refused("--listing-queue-seconds must be a whole number from 0 to 3600, not -1", "server",
            "--listing-queue-seconds", "-1"));
  }

  static Arguments refused(String message, String... args) {
    return Arguments.of(message, args);
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("outOfRange")
  void aNumberOutOfRangeIsRefusedNamingTheOptionAndTheRange(String message, String[] args) {
    List<String> command = new ArrayList<>(List.of(args));
    if (command.get(0).equals("server")) {
      command.addAll(List.of("--root", root.toString()));
      if (!command.contains("--port")) {
        command.addAll(List.of("--port", "0"));
      }
    }
    StringWriter err = new StringWriter();
    // A server that took its options would serve until stopped.
    int exit = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> GpuDirectCli.commandLine()
        .setErr(new PrintWriter(err, true)).execute(command.toArray(new String[0])));
    assertTrue(exit != 0, String.join(" ", command) + " was taken");
    assertTrue(err.toString().contains(message), err.toString());
  }

  @Test
  void sizesTakeSparksNotation() throws Exception {
    Files.writeString(root.resolve("a.txt"), "x");
    try (BlockServer s = BlockServer.builder().root(root).port(0).build().start()) {
      StringWriter err = new StringWriter();
      int exit = GpuDirectCli.commandLine().setErr(new PrintWriter(err, true))
          .execute("ls", "--max-bytes-in-flight", "128m", "gpudirect://127.0.0.1:" + s.port() + "/a.txt");
      assertEquals(0, exit, err.toString());
    }
  }
}
