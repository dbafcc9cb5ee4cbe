package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.BufferAllocator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class CopyEngineGpuTest extends GpuTest {
  @Test
  void chunksLandInDeviceMemoryAndGoBackToThePool() {
    int chunk = 1 << 20;
    byte[] data = new byte[16 * chunk + 12345];
    new Random(42).nextBytes(data);
    try (BufferAllocator root = BufferAllocator.newRoot("gpu-test", 64L << 20);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(root, 4, chunk, Duration.ofSeconds(10));
         CopyEngine engine = new CopyEngine();
         DeviceBuffer device = DeviceBuffer.allocate(data.length)) {
      assertTrue(pool.isRegistered(), "on a GPU the pool's chunks are registered with CUDA");
      List<CompletableFuture<Void>> copies = new ArrayList<>();
      for (int off = 0; off < data.length; off += chunk) {
        int len = Math.min(chunk, data.length - off);
        PinnedChunk c = pool.acquire();
        c.view().put(data, off, len);
        copies.add(engine.copyToDevice(c, len, device.address() + off));
      }
      copies.forEach(CompletableFuture::join);
      engine.synchronize();
      assertEquals(0, pool.chunksInUse(), "every chunk went back after its copy");

      ByteBuffer back = ByteBuffer.allocateDirect(data.length);
      device.copyToHost(0, back);
      byte[] copied = new byte[data.length];
      back.flip().get(copied);
      assertArrayEquals(data, copied);
    }
  }
}
