package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * Our fetch of a large file into direct buffers: a {@link BlockClient} with {@code streams}
 * connections, the file read over and over in pieces of {@code pieceBytes}, two pieces in
 * flight (like {@code gpudirect cat}), until the time is up. The client itself splits each
 * piece into chunks spread over the streams.
 */
final class OurFetch {
  private OurFetch() {}

  static ClientConfig config(int streams, int chunkSize, boolean checksums) {
    return ClientConfig.builder().streams(streams).transport("tcp").chunkSize(chunkSize)
        .maxBytesInFlight(Math.max(64 << 20, chunkSize * streams * 2)).checksums(checksums)
        .build();
  }

  /** Reads {@code path} (of {@code fileBytes}) from {@code server} for about {@code seconds}. */
  static Measurement run(InetSocketAddress server, String path, long fileBytes, ClientConfig config,
      double seconds) throws Exception {
    int piece = (int) Math.min(fileBytes, Long.getLong("gpudirect.bench.piece", 32L << 20));
    try (BlockClient client = BlockClient.connect(server, config);
         BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench-fetch", 2L * piece);
         HostBuffer a = allocator.allocate(piece);
         HostBuffer b = allocator.allocate(piece)) {
      // One untimed piece so connections and the JIT are warm when the clock starts.
      client.read(path, 0, a.nioBuffer().clear());
      ByteBuffer[] views = {a.nioBuffer(), b.nioBuffer()};
      long deadline = System.nanoTime() + (long) (seconds * 1e9);
      return Measurement.of(() -> {
        long moved = 0;
        long offset = 0;
        int i = 0;
        CompletableFuture<Void> pending = start(client, path, fileBytes, offset, views[i]);
        offset = next(offset, views[i].remaining(), fileBytes);
        while (true) {
          pending.join();
          moved += views[i].position();
          if (System.nanoTime() >= deadline) {
            return moved;
          }
          i ^= 1;
          pending = start(client, path, fileBytes, offset, views[i]);
          offset = next(offset, views[i].remaining(), fileBytes);
        }
      });
    }
  }

  private static CompletableFuture<Void> start(BlockClient client, String path, long fileBytes,
      long offset, ByteBuffer view) {
    view.clear().limit((int) Math.min(view.capacity(), fileBytes - offset));
    return client.readAsync(path, offset, view);
  }

  private static long next(long offset, int length, long fileBytes) {
    long n = offset + length;
    return n >= fileBytes ? 0 : n;
  }
}
