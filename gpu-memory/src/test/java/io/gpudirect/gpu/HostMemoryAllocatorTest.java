package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.memory.AllocationLimitException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import org.junit.jupiter.api.Test;

/**
 * cuDF host buffers' accounting, run without a GPU: the buffers are cuDF's own, allocated
 * with plain host memory ({@code allocateRaw}, which needs no CUDA), and their reference
 * counting, slicing and close events are cuDF's.
 */
class HostMemoryAllocatorTest {
  @Test
  void aBufferStaysChargedUntilCudfClosesItsLastSliceAndALeakNamesIt() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("gpu-host", 1 << 20)) {
      HostMemoryAllocator host = new HostMemoryAllocator(accounts, HostMemoryBuffer::allocateRaw);
      HostMemoryBuffer footer = host.allocate(1000, "footer of a.parquet");
      HostMemoryBuffer part = footer.slice(0, 10);
      footer.close();
      MemoryLeakException leak = assertThrows(MemoryLeakException.class, accounts::assertNoLeaks);
      assertTrue(leak.getMessage().contains("footer of a.parquet (1000 bytes in 'gpu-host')"), leak.getMessage());
      part.close();
      assertEquals(0, accounts.outstandingBytes());
      accounts.assertNoLeaks();
    }
  }

  @Test
  void anAllocationPastTheLimitFailsBeforeCudfIsAsked() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("gpu-host", 100)) {
      HostMemoryAllocator host = new HostMemoryAllocator(accounts, bytes -> {
        throw new AssertionError("cuDF asked for " + bytes + " bytes");
      });
      assertThrows(AllocationLimitException.class, () -> host.allocate(101, "staged bytes"));
      assertEquals(0, accounts.outstandingBytes());
    }
  }
}
