package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import org.junit.jupiter.api.Test;

/** The JVM's GPU context: made once, on first use, and where there is no GPU not at all. */
class GpuResourcesTest {
  @Test
  void theJvmsGpuContextIsMadeOnceOrFailsClearlyPinningNothing() {
    long before = BufferAllocator.root().outstandingBytes();
    if (!GpuEnvironment.get().gpu()) {
      // Here (CI): asking fails clearly and pins nothing, rather than leaving a pool behind.
      GpuDirectException e = assertThrows(GpuDirectException.class, GpuResources::shared);
      assertTrue(e.getMessage().startsWith("No GPU"), e.getMessage());
      assertEquals(before, BufferAllocator.root().outstandingBytes(), "pinned bytes left behind");
      assertTrue(GpuResources.open().isEmpty(), GpuResources.open().toString());
      return;
    }
    GpuResources gpu = GpuResources.shared();
    assertSame(gpu, GpuResources.shared(), "one pool and engine per JVM");
    assertTrue(GpuResources.open().contains(gpu));
    assertTrue(BufferAllocator.root().outstandingBytes() > before, "the pool pinned its chunks");
  }
}
