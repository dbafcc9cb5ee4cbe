package io.gpudirect.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.AllocationLimitException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;

/** Arrow's host buffers are charged to gpu-memory's allocator tree, with its limits and leak reports. */
class ArrowMemoryTest {
  /** The connector's own Arrow root is the one wired to the tree, under root/arrow. */
  @Test
  void theConnectorsArrowRootIsChargedToTheProcessWideTree() {
    long before = BufferAllocator.root().outstandingBytes();
    try (org.apache.arrow.memory.BufferAllocator reader = ArrowMemory.child("read test");
         ArrowBuf buf = reader.buffer(1 << 16)) {
      assertEquals(before + (1 << 16), BufferAllocator.root().outstandingBytes());
      assertTrue(BufferAllocator.root().outstanding().contains("Arrow host buffer (65536 bytes in 'root/arrow')"),
          BufferAllocator.root().outstanding());
    }
    assertEquals(before, BufferAllocator.root().outstandingBytes());
  }

  @Test
  void arrowBuffersAreChargedUntilReleased() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("arrow-test", 1 << 20);
         RootAllocator arrow = new RootAllocator(new ArrowMemory.Charges(accounts), Long.MAX_VALUE);
         org.apache.arrow.memory.BufferAllocator reader = arrow.newChildAllocator("read x", 0, Long.MAX_VALUE)) {
      ArrowBuf a = reader.buffer(4096);
      ArrowBuf b = arrow.buffer(100);
      assertEquals(arrow.getAllocatedMemory(), accounts.outstandingBytes(), "what Arrow holds, we see");
      assertTrue(accounts.outstandingBytes() >= 4196);
      try (IntVector v = new IntVector("v", reader)) {
        v.allocateNew(1000);
        assertEquals(arrow.getAllocatedMemory(), accounts.outstandingBytes());
      }
      a.close();
      b.close();
      assertEquals(0, accounts.outstandingBytes());
    }
  }

  @Test
  void anAllocationPastOurLimitFailsBeforeArrowAllocates() {
    try (BufferAllocator root = BufferAllocator.newRoot("executor", Long.MAX_VALUE)) {
      BufferAllocator accounts = root.newChildAllocator("arrow", 8192);
      try (RootAllocator arrow = new RootAllocator(new ArrowMemory.Charges(accounts), Long.MAX_VALUE);
           ArrowBuf held = arrow.buffer(4096)) {
        AllocationLimitException e = assertThrows(AllocationLimitException.class, () -> arrow.buffer(8192));
        assertEquals("executor/arrow", e.allocator());
        assertTrue(e.getMessage().contains("Arrow host buffer"), e.getMessage());
        assertEquals(4096, arrow.getAllocatedMemory(), "Arrow allocated nothing for the refused buffer");
        assertEquals(4096, accounts.outstandingBytes());
      }
      accounts.close();
    }
  }

  @Test
  void aBufferArrowStillHoldsIsALeakOfOurs() {
    BufferAllocator accounts = BufferAllocator.newRoot("arrow-leak", 1 << 20);
    RootAllocator arrow = new RootAllocator(new ArrowMemory.Charges(accounts), Long.MAX_VALUE);
    ArrowBuf kept = arrow.buffer(512);
    MemoryLeakException e = assertThrows(MemoryLeakException.class, accounts::close);
    assertTrue(e.getMessage().contains("Arrow host buffer (512 bytes in 'arrow-leak')"), e.getMessage());
    kept.close();
    arrow.close();
    accounts.close();
  }
}
