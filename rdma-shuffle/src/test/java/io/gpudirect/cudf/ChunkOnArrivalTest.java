package io.gpudirect.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.RemoteFileException;
import io.gpudirect.gpu.PinnedChunk;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionLostException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Late binding of pinned chunks, without a GPU: the pool in host mode (plain direct buffers)
 * and a real server on loopback. What {@link RemoteFileDataSource} does with a piece of a
 * device read up to the copy: a {@link ChunkOnArrival} handed to the store, its chunk handed
 * over once the read is done (here closed, as the copy engine does after its copy) or given
 * back when it failed.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ChunkOnArrivalTest {
  static final int PIECE = 256 * 1024;
  static final int SIZE = 16 * PIECE + 1000;

  @TempDir static Path root;
  static BlockServer server;
  static byte[] file;

  BufferAllocator allocator;

  @BeforeAll
  static void startServer() throws IOException {
    file = TestFiles.write(root.resolve("data.bin"), SIZE, 7);
    server = BlockServer.builder().root(root).port(0).build().start();
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void before() {
    allocator = BufferAllocator.newRoot("test", 64L << 20);
  }

  @AfterEach
  void after() {
    allocator.close();
  }

  static ClientConfig.Builder config() {
    return ClientConfig.builder().streams(1).chunkSize(PIECE).maxBytesInFlight(4 * PIECE)
        .retryBackoff(Duration.ofMillis(10)).requestTimeout(Duration.ofSeconds(10));
  }

  static BlockClient connect(int port, ClientConfig config) {
    return BlockClient.connect(new InetSocketAddress("127.0.0.1", port), config);
  }

  PinnedChunkPool pool(int chunks, Duration timeout) {
    return new PinnedChunkPool(allocator, chunks, PIECE, timeout, false);
  }

  @Test
  void aPieceTakesItsChunkOnlyWhenItsBytesStartToArrive() throws Exception {
    // The proxy holds the answers back in the second one's payload: the first has landed, the
    // second is arriving, the third and fourth are still waiting on the wire behind it.
    try (LoopbackCutter held = new LoopbackCutter(server.port(), PIECE + 100_000, 1).holdUntilReleased();
         PinnedChunkPool pool = pool(8, Duration.ofSeconds(5));
         BlockClient client = connect(held.port(), config().build())) {
      List<ChunkOnArrival> pieces = new ArrayList<>();
      List<CompletableFuture<OptionalInt>> reads = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        ChunkOnArrival piece = new ChunkOnArrival(pool, PIECE);
        pieces.add(piece);
        reads.add(client.readAsyncUnverified("data.bin", FileVersion.ANY, (long) i * PIECE, PIECE, piece));
      }
      assertEquals(OptionalInt.of(crc32c(0, PIECE)), reads.get(0).get(10, TimeUnit.SECONDS));
      // The proxy holds back the rest of the second payload; its reader has bound it.
      waitFor(() -> held.faultsInjected() == 1 && pieces.get(1).bound());
      // That reader is inside the second payload, so no thread can bind the others.
      assertFalse(pieces.get(2).bound(), "a request still waiting on the wire took a chunk");
      assertFalse(pieces.get(3).bound(), "a request still waiting on the wire took a chunk");
      assertEquals(2, pool.chunksInUse());
      assertEquals(2, pool.takePeakChunksInUse());
      handOver(pieces.get(0), 0);

      held.release();
      for (int i = 1; i < 4; i++) {
        assertEquals(OptionalInt.of(crc32c(i * PIECE, PIECE)), reads.get(i).get(10, TimeUnit.SECONDS));
        handOver(pieces.get(i), i * PIECE);
      }
      assertEquals(0, pool.chunksInUse());
    }
  }

  @Test
  void aReadRefusedBeforeItsBytesTakesNoChunk() throws Exception {
    try (PinnedChunkPool pool = pool(2, Duration.ofSeconds(5));
         BlockClient client = connect(server.port(), config().build())) {
      ChunkOnArrival pastTheEnd = new ChunkOnArrival(pool, PIECE);
      ChunkOnArrival missing = new ChunkOnArrival(pool, PIECE);
      ExecutionException e = assertThrows(ExecutionException.class, () -> client.readAsyncUnverified(
          "data.bin", FileVersion.ANY, SIZE - 10, PIECE, pastTheEnd).get(10, TimeUnit.SECONDS));
      assertInstanceOf(RemoteFileException.class, e.getCause());
      e = assertThrows(ExecutionException.class, () -> client.readAsync(
          "nothing.bin", FileVersion.ANY, 0, PIECE, missing).get(10, TimeUnit.SECONDS));
      assertInstanceOf(RemoteFileException.class, e.getCause());
      assertFalse(pastTheEnd.bound());
      assertFalse(missing.bound());
      assertEquals(0, pool.takePeakChunksInUse());
      pastTheEnd.giveBack();
      // Once given back, nothing is taken for it any more.
      assertThrows(GpuDirectException.class, pastTheEnd::bind);
      assertEquals(0, pool.chunksInUse());
    }
  }

  @Test
  void aConnectionLostMidPayloadFailsTheReadWithItsChunkBoundOrRetriesIntoTheSameChunk() throws Exception {
    try (LoopbackCutter cut = new LoopbackCutter(server.port(), 100_000, 1);
         PinnedChunkPool pool = pool(2, Duration.ofSeconds(5));
         BlockClient client = connect(cut.port(), config().maxRetries(0).build())) {
      ChunkOnArrival piece = new ChunkOnArrival(pool, PIECE);
      ExecutionException e = assertThrows(ExecutionException.class, () -> client.readAsyncUnverified(
          "data.bin", FileVersion.ANY, 0, PIECE, piece).get(10, TimeUnit.SECONDS));
      assertInstanceOf(ConnectionLostException.class, e.getCause());
      assertTrue(piece.bound(), "the bytes had started to arrive");
      piece.giveBack();
      assertEquals(0, pool.chunksInUse());
    }
    // With a retry, the second attempt lands in the chunk the first one took.
    try (LoopbackCutter cut = new LoopbackCutter(server.port(), 100_000, 1);
         PinnedChunkPool pool = pool(2, Duration.ofSeconds(5));
         BlockClient client = connect(cut.port(), config().maxRetries(2).build())) {
      ChunkOnArrival piece = new ChunkOnArrival(pool, PIECE);
      assertEquals(OptionalInt.of(crc32c(PIECE, PIECE)), client.readAsyncUnverified(
          "data.bin", FileVersion.ANY, PIECE, PIECE, piece).get(10, TimeUnit.SECONDS));
      assertEquals(1, cut.faultsInjected());
      assertEquals(1, client.stats().retries());
      assertEquals(1, pool.takePeakChunksInUse());
      handOver(piece, PIECE);
      assertEquals(0, pool.chunksInUse());
    }
  }

  @Test
  void moreReadsInFlightThanPinnedChunksAllLand() throws Exception {
    // Sixteen pieces in flight over four connections, two chunks: readers wait for a chunk
    // that another piece's completion gives back.
    readSixteenPiecesThroughTwoChunks(config().streams(4).maxBytesInFlight(16 * PIECE).build());
    // Pieces of two requests each, bound when they are sent: one chunk each, the same result.
    readSixteenPiecesThroughTwoChunks(config().streams(3).chunkSize(PIECE / 2).maxBytesInFlight(16 * PIECE).build());
  }

  private void readSixteenPiecesThroughTwoChunks(ClientConfig config) throws Exception {
    try (PinnedChunkPool pool = pool(2, Duration.ofSeconds(5));
         BlockClient client = connect(server.port(), config)) {
      List<CompletableFuture<Void>> landed = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        int offset = i * PIECE;
        ChunkOnArrival piece = new ChunkOnArrival(pool, PIECE);
        CompletableFuture<OptionalInt> read = i % 2 == 0
            ? client.readAsyncUnverified("data.bin", FileVersion.ANY, offset, PIECE, piece)
            : client.readAsync("data.bin", FileVersion.ANY, offset, PIECE, piece).thenApply(v -> OptionalInt.empty());
        landed.add(read.handle((crc, err) -> {
          if (err != null) {
            piece.giveBack();
            throw new IllegalStateException(err);
          }
          crc.ifPresent(c -> assertEquals(crc32c(offset, PIECE), c));
          handOver(piece, offset);
          return null;
        }));
      }
      CompletableFuture.allOf(landed.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
      assertEquals(0, pool.chunksInUse());
      assertTrue(pool.takePeakChunksInUse() <= 2);
    }
  }

  @Test
  void aReadWhoseChunkCannotBeHadFailsAloneAndItsConnectionGoesOn() throws Exception {
    try (PinnedChunkPool pool = pool(2, Duration.ofMillis(200));
         BlockClient client = connect(server.port(), config().build())) {
      PinnedChunk a = pool.acquire();
      PinnedChunk b = pool.acquire();
      ChunkOnArrival starved = new ChunkOnArrival(pool, PIECE);
      ExecutionException e = assertThrows(ExecutionException.class, () -> client.readAsyncUnverified(
          "data.bin", FileVersion.ANY, 0, PIECE, starved).get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains("Pinned pool exhausted"), e.getCause().getMessage());
      assertEquals(0, client.stats().retries());
      a.close();
      b.close();
      // The payload was read past: the same connection carries the next read, right.
      ChunkOnArrival next = new ChunkOnArrival(pool, PIECE);
      assertEquals(OptionalInt.of(crc32c(3 * PIECE, PIECE)), client.readAsyncUnverified(
          "data.bin", FileVersion.ANY, 3 * PIECE, PIECE, next).get(10, TimeUnit.SECONDS));
      handOver(next, 3 * PIECE);
      assertEquals(0, client.stats().retries());
      assertEquals(0, pool.chunksInUse());
    }
  }

  /** What the copy engine does with a filled chunk, on the CPU: takes it, uses it, closes it. */
  private static void handOver(ChunkOnArrival piece, int offset) {
    try (PinnedChunk chunk = piece.handOver()) {
      assertEquals(ByteBuffer.wrap(file, offset, PIECE), chunk.view().limit(PIECE));
    }
  }

  private static int crc32c(int offset, int length) {
    CRC32C c = new CRC32C();
    c.update(file, offset, length);
    return (int) c.getValue();
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out waiting");
      Thread.sleep(5);
    }
  }
}
