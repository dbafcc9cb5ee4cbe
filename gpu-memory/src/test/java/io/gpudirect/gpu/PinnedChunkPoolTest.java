package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The pool's lending rules, in host mode (no registration), so they run without a GPU. */
class PinnedChunkPoolTest {
  @Test
  void waitsForAChunkThenFailsClearlyAndNeverFallsBack() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", 1 << 20);
         PinnedChunkPool pool = new PinnedChunkPool(root, 2, 4096, Duration.ofMillis(200), false)) {
      PinnedChunk a = pool.acquire();
      PinnedChunk b = pool.acquire();
      assertEquals(2, pool.chunksInUse());
      long start = System.nanoTime();
      GpuDirectException e = assertThrows(GpuDirectException.class, pool::acquire);
      assertTrue(System.nanoTime() - start >= 150_000_000L, "waited for the timeout");
      assertTrue(e.getMessage().contains("Pinned pool exhausted") && e.getMessage().contains("never falls back"),
          e.getMessage());
      // Back-pressure: a waiting reader gets the chunk another gives back.
      CompletableFuture<PinnedChunk> waiting = CompletableFuture.supplyAsync(pool::acquire);
      a.close();
      PinnedChunk c = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> waiting.join());
      c.close();
      b.close();
      assertEquals(0, pool.chunksInUse());
    }
  }

  @Test
  void thePeakCountsTheMostChunksLentOutAtOnceSinceItWasLastTaken() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", 1 << 20);
         PinnedChunkPool pool = new PinnedChunkPool(root, 4, 4096, Duration.ofMillis(100), false)) {
      PinnedChunk a = pool.acquire();
      PinnedChunk b = pool.acquire();
      PinnedChunk c = pool.acquire();
      b.close();
      c.close();
      assertEquals(3, pool.takePeakChunksInUse());
      // Counted again from the one still lent out.
      assertEquals(1, pool.takePeakChunksInUse());
      a.close();
      pool.acquire().close();
      assertEquals(1, pool.takePeakChunksInUse());
      assertEquals(0, pool.takePeakChunksInUse());
    }
  }

  @Test
  void closingWithChunksLentOutIsALeak() {
    BufferAllocator root = BufferAllocator.newRoot("test", 1 << 20);
    PinnedChunkPool pool = new PinnedChunkPool(root, 2, 4096, Duration.ofMillis(100), false);
    pool.acquire();
    MemoryLeakException e = assertThrows(MemoryLeakException.class, pool::close);
    assertTrue(e.getMessage().contains("1 of 2 chunks"), e.getMessage());
  }

  @Test
  void chunksAreChargedToTheAllocator() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", 1 << 20)) {
      try (PinnedChunkPool pool = new PinnedChunkPool(root, 3, 8192, Duration.ofMillis(100), false)) {
        assertEquals(3 * 8192, root.outstandingBytes());
      }
      assertEquals(0, root.outstandingBytes());
    }
  }
}
