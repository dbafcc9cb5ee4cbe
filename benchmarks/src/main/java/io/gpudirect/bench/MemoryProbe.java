package io.gpudirect.bench;

import io.gpudirect.client.BlockClient;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * The child JVM of the memory check: reads one whole remote file through the client API, two
 * pieces in flight, while a sampler records the peak heap and direct memory in use. Run with
 * a small {@code -Xmx} and {@code -XX:MaxDirectMemorySize}; prints one line
 * {@code bytes=N seconds=S peakHeap=N peakDirect=N}.
 *
 * <p>Arguments: host port path fileBytes pieceBytes.
 */
public final class MemoryProbe {
  private static volatile long peakDirect;
  private static volatile boolean done;

  private MemoryProbe() {}

  public static void main(String[] args) throws Exception {
    InetSocketAddress server = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
    String path = args[2];
    long fileBytes = Long.parseLong(args[3]);
    int piece = Integer.parseInt(args[4]);
    BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
        .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
    Thread sampler = new Thread(() -> {
      while (!done) {
        peakDirect = Math.max(peakDirect, direct.getMemoryUsed());
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    sampler.setDaemon(true);
    sampler.start();
    long start = System.nanoTime();
    long moved = 0;
    try (BlockClient client = BlockClient.connect(server, OurFetch.config(4, 4 << 20, true));
         BufferAllocator allocator = BufferAllocator.root().newChildAllocator("memory-probe", 2L * piece);
         HostBuffer a = allocator.allocate(piece);
         HostBuffer b = allocator.allocate(piece)) {
      ByteBuffer[] views = {a.nioBuffer(), b.nioBuffer()};
      // Both pieces in flight, like the fetch benchmark: the window, not the caller, paces it.
      long[] offset = {0};
      CompletableFuture<?>[] pending = new CompletableFuture<?>[views.length];
      for (int k = 0; k < views.length; k++) {
        pending[k] = start(client, path, fileBytes, offset, views[k]);
      }
      for (int i = 0; pending[i] != null; i = (i + 1) % views.length) {
        pending[i].join();
        moved += views[i].position();
        pending[i] = start(client, path, fileBytes, offset, views[i]);
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    done = true;
    sampler.join();
    peakDirect = Math.max(peakDirect, direct.getMemoryUsed());
    long peakHeap = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peakHeap += pool.getPeakUsage().getUsed();
      }
    }
    if (moved != fileBytes) {
      System.out.println("error: read " + moved + " of " + fileBytes + " bytes");
      System.exit(2);
    }
    System.out.printf("bytes=%d seconds=%.3f peakHeap=%d peakDirect=%d%n", moved, seconds, peakHeap, peakDirect);
  }

  /** The next piece into {@code view}, or null once the whole file has been asked for. */
  private static CompletableFuture<Void> start(BlockClient client, String path, long fileBytes,
      long[] offset, ByteBuffer view) {
    if (offset[0] >= fileBytes) {
      return null;
    }
    int length = (int) Math.min(view.capacity(), fileBytes - offset[0]);
    view.clear().limit(length);
    CompletableFuture<Void> f = client.readAsync(path, offset[0], view);
    offset[0] += length;
    return f;
  }
}
