package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.DeviceMemoryBuffer;
import io.gpudirect.memory.BufferAllocator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The copy engine alone, over a pool of its own: CUDA is enough, cuDF need not load. */
@GpuTest(cudf = false)
class CopyEngineGpuTest {
  @Test
  void chunksLandInDeviceMemoryAndGoBackToThePool() {
    int chunk = 1 << 20;
    byte[] data = new byte[16 * chunk + 12345];
    new Random(42).nextBytes(data);
    try (BufferAllocator root = BufferAllocator.newRoot("gpu-test", 64L << 20);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(root, 4, chunk, Duration.ofSeconds(10));
         CopyEngine engine = new CopyEngine();
         DeviceMemoryBuffer device = new DeviceAllocator(root).allocate(data.length, "copy target")) {
      assertTrue(pool.isRegistered(), "on a GPU the pool's chunks are registered with CUDA");
      List<CompletableFuture<Void>> copies = new ArrayList<>();
      for (int off = 0; off < data.length; off += chunk) {
        int len = Math.min(chunk, data.length - off);
        PinnedChunk c = pool.acquire();
        c.view().put(data, off, len);
        copies.add(engine.copyToDevice(c, len, device.getAddress() + off));
      }
      copies.forEach(CompletableFuture::join);
      engine.synchronize();
      assertEquals(0, pool.chunksInUse(), "every chunk went back after its copy");

      ByteBuffer back = ByteBuffer.allocateDirect(data.length);
      Cuda.copyToHost(back, device.getAddress(), data.length);
      byte[] copied = new byte[data.length];
      back.get(copied);
      assertArrayEquals(data, copied);
    }
  }

  /**
   * The GPU's CRC32C of what a copy put in device memory equals the JDK's of the same bytes,
   * for lengths around the kernel's 256-byte segments and its 256-thread blocks, and at
   * device addresses with every alignment.
   */
  @Test
  void theGpusCrc32cOfTheCopiedBytesEqualsTheJdks() {
    int chunk = 1 << 20;
    byte[] data = new byte[chunk];
    new Random(3).nextBytes(data);
    try (BufferAllocator root = BufferAllocator.newRoot("gpu-test", 64L << 20);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(root, 4, chunk, Duration.ofSeconds(10));
         CopyEngine engine = new CopyEngine();
         DeviceMemoryBuffer device = new DeviceAllocator(root).allocate(16L << 20, "copy target")) {
      assertTrue(engine.checksumsOnDevice(), "the CRC32C kernel loads on this GPU");
      List<CompletableFuture<Integer>> crcs = new ArrayList<>();
      List<Integer> expected = new ArrayList<>();
      int[] lengths = {1, 3, 255, 256, 257, 4096, 65535, 65536 + 1, 256 * 256, 256 * 256 + 1, chunk - 3, chunk};
      // Each copy to its own device range: the next copy may land while a CRC is being computed.
      long at = 0;
      for (int length : lengths) {
        for (int align = 0; align < 4; align++) {
          int len = Math.min(length, chunk - align);
          PinnedChunk c = pool.acquire();
          c.view().put(data, align, len);
          crcs.add(engine.copyToDeviceWithCrc32c(c, len, device.getAddress() + at + align));
          at += len + 8;
          java.util.zip.CRC32C jdk = new java.util.zip.CRC32C();
          jdk.update(data, align, len);
          expected.add((int) jdk.getValue());
        }
      }
      for (int i = 0; i < crcs.size(); i++) {
        assertEquals(String.format("%08x", expected.get(i)), String.format("%08x", crcs.get(i).join()),
            "copy " + i + " (length " + lengths[i / 4] + ", alignment " + i % 4 + ")");
      }
      engine.synchronize();
      assertEquals(0, pool.chunksInUse(), "every chunk went back after its copy");
    }
  }

  /**
   * A thousand checksummed copies through a few chunks, more than the engine's 256 CRC slots:
   * the few slots in use at a time are taken and given back hundreds of times over, and each
   * copy's CRC32C is still its own bytes'. The lengths differ copy by copy, so a CRC read from
   * another copy's slot, or before its kernel wrote it, would not match.
   */
  @Test
  @Timeout(60) // a slot never given back would stall the copies after the 256th
  void slotsComeBackAndEachCopyGetsItsOwnCrc32c() {
    int copies = 1000;
    int chunk = 4096;
    byte[] data = new byte[chunk];
    new Random(11).nextBytes(data);
    try (BufferAllocator root = BufferAllocator.newRoot("gpu-test", 64L << 20);
         PinnedChunkPool pool = PinnedChunkPool.forThisJvm(root, 8, chunk, Duration.ofSeconds(10));
         CopyEngine engine = new CopyEngine();
         DeviceMemoryBuffer device = new DeviceAllocator(root).allocate((long) copies * chunk, "copy target")) {
      List<CompletableFuture<Integer>> crcs = new ArrayList<>();
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < copies; i++) {
        int len = 1 + i % (chunk - 1);
        PinnedChunk c = pool.acquire();
        c.view().put(data, 0, len);
        crcs.add(engine.copyToDeviceWithCrc32c(c, len, device.getAddress() + (long) i * chunk));
        java.util.zip.CRC32C jdk = new java.util.zip.CRC32C();
        jdk.update(data, 0, len);
        expected.add((int) jdk.getValue());
      }
      for (int i = 0; i < copies; i++) {
        assertEquals(String.format("%08x", expected.get(i)), String.format("%08x", crcs.get(i).join()), "copy " + i);
      }
      assertEquals(0, pool.chunksInUse(), "every chunk went back after its copy");
    }
  }
}
