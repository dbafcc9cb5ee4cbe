package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestFiles;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The threads a client's connections share belong to its context, and end when it closes. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ClientContextTest {
  /** The pool that checks large payloads' CRC32C off the connections' reader threads. */
  static final String CHECKSUM_THREADS = "gpudirect-crc-verify";

  @TempDir
  Path root;

  @Test
  void closingAContextEndsTheChecksumThreadsItsConnectionsUsed() throws Exception {
    byte[] data = TestFiles.write(root.resolve("big.bin"), 4 << 20, 7);
    Set<Thread> before = threads(CHECKSUM_THREADS);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      ClientContext context = new ClientContext();
      try (BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
          ClientConfig.builder().streams(2).chunkSize(1 << 20).transport("tcp")
              .requestTimeout(Duration.ofSeconds(10)).build(), context)) {
        // A heap destination and chunks over 64 KiB: each chunk's CRC32C is checked on the pool.
        ByteBuffer dst = ByteBuffer.allocate(data.length);
        client.read("big.bin", 0, dst);
        assertArrayEquals(data, dst.array());
      }
      Set<Thread> mine = threads(CHECKSUM_THREADS);
      mine.removeAll(before);
      assertFalse(mine.isEmpty(), "the context's pool checked the chunks");
      context.close();
      for (Thread t : mine) {
        t.join(5_000);
        assertFalse(t.isAlive(), t + " still runs after its context closed");
      }
    }
  }

  @Test
  void theSharedContextStartsAgainAfterItsOwnerClosedIt() {
    ClientContext first = ClientContext.shared();
    assertTrue(first == ClientContext.shared(), "one per JVM while open");
    first.close();
    ClientContext next = ClientContext.shared();
    assertFalse(first == next, "a closed context is not handed out again");
  }

  static Set<Thread> threads(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().equals(name)).collect(Collectors.toSet());
  }
}
