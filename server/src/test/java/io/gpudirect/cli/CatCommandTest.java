package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpudirect.server.BlockServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code gpudirect cat} in a child JVM (it writes to the process's stdout) against a real server. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CatCommandTest {
  @TempDir Path root;

  /**
   * Buffers of 0 bytes never got past the file's first byte: cat asked for nothing, forever
   * (11.2 million requests in 10 minutes). Now refused before anything is asked.
   */
  @Test
  void aBufferSizeThatCannotMakeProgressIsRefusedNamingTheOption() throws Exception {
    Files.write(root.resolve("f.bin"), new byte[100_000]);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + server.port() + "/f.bin";
      for (String size : new String[] {"0", "-1"}) {
        Process cat = ChildCli.of("cat", "--buffer-size", size, uri).redirectErrorStream(true).start();
        try {
          // Until it ends, or asks the server for anything (as it did, forever): a child JVM
          // can take tens of seconds to start on a loaded machine, so no time limit but the class's.
          while (cat.isAlive() && server.stats().requests() == 0) {
            cat.waitFor(100, TimeUnit.MILLISECONDS);
          }
          long requests = server.stats().requests();
          if (cat.isAlive()) {
            fail("cat --buffer-size " + size + " still running after " + requests + " requests sent");
          }
        } finally {
          if (cat.isAlive()) {
            cat.destroyForcibly().waitFor();
          }
        }
        String out = new String(cat.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, cat.exitValue(), out);
        assertTrue(out.contains("--buffer-size must be a size from 4k to 1g") && out.contains("not " + size),
            out);
        assertEquals(0, server.stats().requests(), "nothing asked of the server");
      }
    }
  }

  /** Sizes as Spark writes them: 64k, not 65536 alone. */
  @Test
  void theBufferSizeTakesSparksSizeNotation() throws Exception {
    byte[] data = new byte[300_000];
    new Random(7).nextBytes(data);
    Files.write(root.resolve("f.bin"), data);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      Process cat = ChildCli.of("cat", "--buffer-size", "64k", "--buffers", "3",
          "gpudirect://127.0.0.1:" + server.port() + "/f.bin").start();
      byte[] copied = cat.getInputStream().readAllBytes();
      assertTrue(cat.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, cat.exitValue(), new String(cat.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
      assertArrayEquals(data, copied);
    }
  }
}
