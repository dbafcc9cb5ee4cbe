package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.FileVersion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;

/** 4 KiB reads at random offsets through the client API, one at a time, timed one by one. */
final class OurLatency {
  private OurLatency() {}

  static Latencies run(InetSocketAddress server, String path, long fileBytes, int readBytes,
      boolean checksums, double seconds, long seed) {
    ClientConfig config = ClientConfig.builder().streams(1).transport("tcp").checksums(checksums).build();
    Random random = new Random(seed);
    Latencies lat = new Latencies();
    try (BlockClient client = BlockClient.connect(server, config);
         BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench-latency", readBytes);
         HostBuffer buf = allocator.allocate(readBytes)) {
      ByteBuffer view = buf.nioBuffer();
      // As a real reader: every read names the version the stat gave (the server checks it).
      FileVersion version = client.stat(path).version();
      // The timed part starts once warmed up: a loaded machine can spend the whole time on the warm-up.
      long deadline = Long.MAX_VALUE;
      int warmup = 200;
      while (warmup > 0 || System.nanoTime() < deadline) {
        long offset = (long) (random.nextDouble() * (fileBytes - readBytes));
        view.clear();
        long t0 = System.nanoTime();
        client.read(path, version, offset, view);
        long t = System.nanoTime() - t0;
        if (warmup > 0) {
          if (--warmup == 0) {
            deadline = System.nanoTime() + (long) (seconds * 1e9);
          }
        } else {
          lat.add(t);
        }
      }
    }
    return lat;
  }
}
