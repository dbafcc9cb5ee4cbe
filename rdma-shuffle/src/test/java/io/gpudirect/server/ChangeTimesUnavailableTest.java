package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.testing.ServerProcess;
import io.gpudirect.testing.TestClassPath;
import io.gpudirect.testing.TestFiles;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server in a JVM that does not open {@code java.base/sun.nio.fs} (started by another launcher
 * than {@code bin/gpudirect}) cannot read change times: it says so once in its log, naming the
 * flag that gives them, and serves as before, with versions that carry none.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChangeTimesUnavailableTest {
  private static final String WARNING = "cannot include the change time";

  @Test
  void aServerThatCannotReadChangeTimesSaysSoOnceAndStillServes(@TempDir Path root) throws Exception {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 1 << 20, 3);
    // No --add-opens at all: the build's own flags are not passed on.
    Process server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", TestClassPath.of(ChangeTimesUnavailableTest.class), ServerProcess.class.getName(), root.toString())
        .redirectErrorStream(true).start();
    StringBuilder log = new StringBuilder();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread pump = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          log.append(line).append('\n');
          if (line.startsWith("port ")) {
            port.complete(Integer.parseInt(line.substring(5).trim()));
          }
        }
      } catch (java.io.IOException | RuntimeException e) {
        port.completeExceptionally(e);
      }
      port.completeExceptionally(new AssertionError("the server process ended:\n" + log));
    }, "server-process-output");
    pump.setDaemon(true);
    pump.start();
    try {
      try (BlockClient client = BlockClient.connect(
          new InetSocketAddress("127.0.0.1", port.get(30, TimeUnit.SECONDS)), ClientConfig.builder().build())) {
        for (int i = 0; i < 2; i++) {
          FileVersion version = client.stat("f.bin").version();
          assertEquals(FileVersion.CHANGE_TIME_UNKNOWN, version.changedNanos(), version.describe());
          ByteBuffer read = ByteBuffer.allocateDirect(data.length);
          client.read("f.bin", version, 0, read);
          assertEquals(ByteBuffer.wrap(data), read.flip());
        }
      }
      server.getOutputStream().close();
      assertTrue(server.waitFor(20, TimeUnit.SECONDS), "the server stops when its input closes");
      pump.join(10_000);
      String all = log.toString();
      assertEquals(1, all.split(WARNING, -1).length - 1, "said once:\n" + all);
      assertTrue(all.contains("WARN") && all.contains("--add-opens=java.base/sun.nio.fs=ALL-UNNAMED"), all);
    } finally {
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
