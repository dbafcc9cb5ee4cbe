package io.gpudirect.bench.jmh;

import io.gpudirect.gpu.PinnedChunk;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The chunk pool the socket reads into (host mode: direct buffers, no CUDA): one acquire and
 * give-back per chunk, from one thread and from two contending ones.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChunkPoolBenchmark {
  @Param({"32"})
  public int chunks;

  private BufferAllocator allocator;
  private PinnedChunkPool pool;

  @Setup(Level.Trial)
  public void setUp() {
    allocator = BufferAllocator.newRoot("jmh-pool", 1L << 30);
    pool = new PinnedChunkPool(allocator, chunks, 64 * 1024, Duration.ofSeconds(10), false);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    pool.close();
    allocator.close();
  }

  @Benchmark
  public int acquireAndGiveBack() {
    try (PinnedChunk c = pool.acquire()) {
      return c.capacity();
    }
  }

  @Benchmark
  @Threads(2)
  public int acquireAndGiveBackContended() {
    try (PinnedChunk c = pool.acquire()) {
      return c.capacity();
    }
  }
}
