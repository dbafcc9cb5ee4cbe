package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestFiles;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a client context owns (its connections' threads, its kept stores) ends when it closes. */
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
  void storesWithEqualKeysAreSharedAndCloseWithTheirContext() throws Exception {
    TestFiles.write(root.resolve("f.bin"), 100, 1);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
      ClientConfig config = ClientConfig.builder().transport("tcp").build();
      ClientContext context = new ClientContext();
      RemoteStore first = context.store(List.of(address, "settings"),
          () -> BlockClient.connect(address, config, context));
      RemoteStore second = context.store(List.of(address, "settings"), () -> {
        throw new AssertionError("an equal key connects no second store");
      });
      assertSame(first, second);
      assertEquals(100, first.stat("f.bin").length());
      context.close();
      GpuDirectException e = assertThrows(GpuDirectException.class, () -> first.stat("f.bin"));
      assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    }
  }

  /**
   * A TCP connection's inbox and outbox are charged to its context's memory while it is open,
   * named after its server, and given back when it closes; a context closed while a client of
   * it still holds them says so.
   */
  @Test
  void aContextsConnectionsChargeItsMemoryWhileOpenAndAContextClosedTooEarlyNamesThem() throws Exception {
    TestFiles.write(root.resolve("f.bin"), 100, 1);
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      ClientContext context = new ClientContext();
      BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
          ClientConfig.builder().streams(2).transport("tcp").build(), context);
      assertEquals(100, client.stat("f.bin").length());
      BufferAllocator memory = context.memory();
      assertEquals(4, memory.outstandingBuffers(), "an inbox and an outbox per stream: " + memory.outstanding());
      assertTrue(memory.outstanding().contains("TCP inbox of the connection to gpudirect server 127.0.0.1:"
          + server.port()), memory.outstanding());
      MemoryLeakException early = assertThrows(MemoryLeakException.class, context::close);
      assertTrue(early.getMessage().contains("4 buffer(s)") && early.getMessage().contains("TCP outbox"),
          early.getMessage());
      client.close();
      memory.assertNoLeaks();
      context.close();
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
