package io.gpudirect.bench.jmh;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The payload checksum, one pass over every byte on each end: {@code java.util.zip.CRC32C}
 * (the JIT's intrinsic uses the CPU's crc32 instruction) over a direct buffer, as the data path
 * does, with CRC32 beside it for scale. Score: microseconds per buffer; GB/s = size / score.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChecksumBenchmark {
  @Param({"4096", "65536", "4194304"})
  public int size;

  private ByteBuffer direct;

  @Setup
  public void setUp() {
    byte[] bytes = new byte[size];
    new Random(1).nextBytes(bytes);
    direct = ByteBuffer.allocateDirect(size).put(bytes).flip();
  }

  @Benchmark
  public long crc32c() {
    CRC32C c = new CRC32C();
    c.update(direct.duplicate());
    return c.getValue();
  }

  @Benchmark
  public long crc32() {
    CRC32 c = new CRC32();
    c.update(direct.duplicate());
    return c.getValue();
  }
}
