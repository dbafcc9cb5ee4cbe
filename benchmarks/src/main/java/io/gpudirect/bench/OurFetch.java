package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.FileVersion;
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
    try (BlockClient client = BlockClient.connect(server, config)) {
      return run(client, path, fileBytes, seconds);
    }
  }

  /** The bytes a run holds at once: two pieces, each filled whole before it is asked for again. */
  static long heldBytes(long fileBytes) {
    return 2L * piece(fileBytes);
  }

  private static int piece(long fileBytes) {
    return (int) Math.min(fileBytes, Long.getLong("gpudirect.bench.piece", 32L << 20));
  }

  /** As above, through {@code client}, which stays open: a client a process keeps, as an executor does. */
  static Measurement run(BlockClient client, String path, long fileBytes, double seconds) throws Exception {
    int piece = piece(fileBytes);
    try (BufferAllocator allocator = BufferAllocator.root().newChildAllocator("bench-fetch", 2L * piece);
         HostBuffer a = allocator.allocate(piece);
         HostBuffer b = allocator.allocate(piece)) {
      // One untimed piece so connections and the JIT are warm when the clock starts.
      // As a real reader: every read names the version the stat gave (the server checks it).
      FileVersion version = client.stat(path).version();
      client.read(path, version, 0, a.nioBuffer().clear());
      ByteBuffer[] views = {a.nioBuffer(), b.nioBuffer()};
      long deadline = System.nanoTime() + (long) (seconds * 1e9);
      return Measurement.of(() -> {
        // Both pieces in flight from the start; each one that lands is asked for again at
        // once, so the streams never drain between pieces.
        long moved = 0;
        long[] offset = {0};
        CompletableFuture<?>[] pending = new CompletableFuture<?>[views.length];
        for (int k = 0; k < views.length; k++) {
          pending[k] = start(client, path, version, fileBytes, offset, views[k]);
        }
        for (int i = 0; ; i = (i + 1) % views.length) {
          pending[i].join();
          moved += views[i].position();
          if (System.nanoTime() >= deadline) {
            // The other piece is already under way: wait for it and count it.
            for (int k = 0; k < views.length; k++) {
              if (k != i) {
                pending[k].join();
                moved += views[k].position();
              }
            }
            return moved;
          }
          pending[i] = start(client, path, version, fileBytes, offset, views[i]);
        }
      });
    }
  }

  /** Asks for the next piece of the file (wrapping round at its end) into {@code view}. */
  private static CompletableFuture<Void> start(BlockClient client, String path, FileVersion version,
      long fileBytes, long[] offset, ByteBuffer view) {
    int length = (int) Math.min(view.capacity(), fileBytes - offset[0]);
    view.clear().limit(length);
    CompletableFuture<Void> f = client.readAsync(path, version, offset[0], view);
    offset[0] = offset[0] + length >= fileBytes ? 0 : offset[0] + length;
    return f;
  }
}
