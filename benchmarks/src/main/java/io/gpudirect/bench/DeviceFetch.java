package io.gpudirect.bench;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.CopyEngine;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.FileVersion;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A remote file fetched into GPU memory the way cuDF asks for it ({@link RemoteFileDataSource}:
 * over TCP into registered pinned chunks, each copied to the device while the next arrives; by
 * RDMA straight into it where that works), as rdma-shuffle's GpuFetchBenchmark measures it on
 * loopback: pieces of up to 1 GiB, one after another, until the time is up. Loaded only where
 * {@link io.gpudirect.gpu.GpuEnvironment} finds a GPU and cuDF.
 */
final class DeviceFetch {
  static final int CHUNK = 4 << 20;
  /** Pinned chunks of the pool: 256 MiB, what GpuFetchBenchmark holds. */
  static final int CHUNKS = 64;

  private DeviceFetch() {}

  /** {@code config}: the client's settings, its chunk size {@link #CHUNK}. */
  static Measurement run(InetSocketAddress server, String path, long fileBytes, ClientConfig config,
      double seconds) throws Exception {
    long piece = Math.min(fileBytes, 1L << 30);
    try (BlockClient client = BlockClient.connect(server, config);
         BufferAllocator allocator = BufferAllocator.newRoot("bench-device", (long) CHUNKS * CHUNK);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(allocator, CHUNKS, CHUNK, Duration.ofSeconds(60));
         CopyEngine engine = new CopyEngine();
         DeviceMemoryBuffer device = DeviceMemoryBuffer.allocate(piece)) {
      FileVersion version = client.stat(path).version();
      RemoteFileDataSource source = new RemoteFileDataSource(client, path, version, fileBytes, pool, engine);
      // One untimed piece: connections, registrations and the JIT warm before the clock starts.
      source.deviceRead(0, device.slice(0, Math.min(piece, 64L << 20)), Cuda.DEFAULT_STREAM);
      long deadline = System.nanoTime() + (long) (seconds * 1e9);
      return Measurement.of(() -> {
        long moved = 0;
        long offset = 0;
        do {
          long n = Math.min(piece, fileBytes - offset);
          try (DeviceMemoryBuffer dst = device.slice(0, n)) {
            moved += source.deviceRead(offset, dst, Cuda.DEFAULT_STREAM);
          }
          // Counted once the bytes are in device memory, not when their copies were queued.
          Cuda.DEFAULT_STREAM.sync();
          offset = offset + n >= fileBytes ? 0 : offset + n;
        } while (System.nanoTime() < deadline);
        return moved;
      });
    }
  }
}
