package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.testing.LoopbackCutter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Through the client API: a file that changes while it is read fails the read with
 * {@link FileChangedException} naming the server, the file and the version read; never bytes
 * of both versions, never a retry into success.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FileChangeTest {
  static final int SIZE = 8 << 20;

  @TempDir static Path root;
  static BlockServer server;

  @BeforeAll
  static void start() throws IOException {
    server = BlockServer.builder().root(root).port(0).build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static ClientConfig.Builder config() {
    return ClientConfig.builder().streams(2).chunkSize(1 << 20).maxBytesInFlight(4 << 20)
        .retryBackoff(Duration.ofMillis(10)).requestTimeout(Duration.ofSeconds(20));
  }

  /** The first half read, the file changed, the second half asked for: refused. */
  @ParameterizedTest
  @EnumSource(FileChanges.class)
  void aReadAfterTheFileChangedFailsNamingIt(FileChanges change) throws Exception {
    String name = "between-" + change + ".bin";
    byte[] before = FileChanges.writeSettled(root.resolve(name), SIZE, 5);
    try (BlockClient client = BlockClient.connect(addr(server.port()), config().build())) {
      FileEntry entry = client.stat(name);
      ByteBuffer first = ByteBuffer.allocateDirect(SIZE / 2);
      client.read(name, entry.version(), 0, first);
      assertEquals(ByteBuffer.wrap(before, 0, SIZE / 2), first.flip());

      change.apply(root.resolve(name), 6);

      ByteBuffer rest = ByteBuffer.allocateDirect(SIZE / 2);
      FileChangedException e = assertThrows(FileChangedException.class,
          () -> client.read(name, entry.version(), SIZE / 2, rest));
      assertNamed(e, name, entry);
      ExecutionException async = assertThrows(ExecutionException.class,
          () -> client.readAsync(name, entry.version(), SIZE / 2, rest.clear()).get(20, TimeUnit.SECONDS));
      assertNamed(assertInstanceOf(FileChangedException.class, async.getCause()), name, entry);
      assertEquals(0, client.stats().retries(), "a changed file is not retried");
    }
  }

  /**
   * The file is written while the server sends one chunk (held in sendfile by a proxy that
   * stops forwarding until released): the server voids the payload after it, and the read
   * fails; with and without checksums (the trailer's status byte is there either way). The
   * file is large enough that its first chunk (half of it: the read is cut so that the one
   * stream has two requests outstanding) is still being sent when the proxy holds it, however
   * much the loopback's socket buffers take in. A write whose writer then puts the exact
   * modification time back (attack 6 of issue 28) fails it as well: the change time moved.
   */
  @ParameterizedTest
  @CsvSource({"OVERWRITTEN, true", "OVERWRITTEN, false", "OVERWRITTEN_MTIME_PUT_BACK, true",
      "OVERWRITTEN_MTIME_PUT_BACK, false"})
  void aWriteDuringTheTransferFailsTheRead(FileChanges change, boolean checksums) throws Exception {
    String name = "during-" + change + "-" + checksums + ".bin";
    int size = 64 << 20;
    FileChanges.writeSettled(root.resolve(name), size, 7);
    try (LoopbackCutter held = new LoopbackCutter(server.port(), 1 << 20, 1).holdUntilReleased();
        BlockClient client = BlockClient.connect(addr(held.port()),
            config().streams(1).chunkSize(size).maxBytesInFlight(size).checksums(checksums).build())) {
      FileEntry entry = client.stat(name);
      ByteBuffer dst = ByteBuffer.allocateDirect(size);
      CompletableFuture<Void> read = client.readAsync(name, entry.version(), 0, dst);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (held.faultsInjected() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertEquals(1, held.faultsInjected(), "the proxy holds the answer");
      // The proxy forwarded 1 MiB and holds 64 KiB: the server is in sendfile of a 32 MiB chunk.
      change.apply(root.resolve(name), 8);
      held.release();
      ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(20, TimeUnit.SECONDS));
      FileChangedException changed = assertInstanceOf(FileChangedException.class, e.getCause());
      assertNamed(changed, name, entry);
      assertTrue(changed.getMessage().contains("while it was being read"), changed.getMessage());
    }
  }

  private static void assertNamed(FileChangedException e, String name, FileEntry entry) {
    assertEquals(ErrorCode.FILE_CHANGED, e.code());
    assertEquals(name, e.path());
    assertEquals("127.0.0.1:" + e.server().substring(e.server().lastIndexOf(':') + 1), e.server());
    assertEquals(entry.version(), e.expected());
    assertTrue(e.getMessage().contains("'" + name + "'") && e.getMessage().contains(e.server())
        && e.getMessage().contains(entry.version().describe()), e.getMessage());
  }

  private static InetSocketAddress addr(int port) {
    return new InetSocketAddress("127.0.0.1", port);
  }
}
