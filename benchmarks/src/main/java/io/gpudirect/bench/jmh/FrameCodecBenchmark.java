package io.gpudirect.bench.jmh;

import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The frames of the data path, once per chunk on each end: the client encodes a READ, the
 * server decodes it and encodes the READ_DATA header, the client decodes that.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FrameCodecBenchmark {
  private final ReadRequest read = new ReadRequest(42, "data/part-00000.parquet", 1L << 30, 4 << 20);
  private ByteBuffer readFrame;
  private ByteBuffer readDataFrame;

  @Setup
  public void setUp() {
    readFrame = Frames.encode(read).position(4);
    readDataFrame = Frames.encode(new ReadData(42, 1L << 30, 4 << 20)).position(4);
  }

  @Benchmark
  public ByteBuffer encodeRead() {
    return Frames.encode(read);
  }

  @Benchmark
  public Message decodeRead() {
    return Frames.decode(readFrame.duplicate());
  }

  @Benchmark
  public ByteBuffer encodeReadData() {
    return Frames.encode(new ReadData(42, 1L << 30, 4 << 20));
  }

  @Benchmark
  public Message decodeReadData() {
    return Frames.decode(readDataFrame.duplicate());
  }
}
