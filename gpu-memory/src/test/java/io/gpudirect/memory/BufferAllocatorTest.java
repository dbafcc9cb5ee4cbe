package io.gpudirect.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.testing.DirectBytes;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class BufferAllocatorTest {

  @Test
  void allocatesDirectBuffersAndAccountsForThem() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", 1024)) {
      HostBuffer b = root.allocate(100);
      ByteBuffer nio = b.nioBuffer();
      assertTrue(nio.isDirect());
      assertEquals(100, nio.remaining());
      assertEquals(100, root.outstandingBytes());
      b.close();
      assertEquals(0, root.outstandingBytes());
      root.assertNoLeaks();
    }
  }

  @Test
  void childLimitAndParentLimitBothApply() {
    try (BufferAllocator root = BufferAllocator.newRoot("executor", 1000)) {
      BufferAllocator child = root.newChildAllocator("reader", 600);
      HostBuffer a = child.allocate(500);
      AllocationLimitException overChild =
          assertThrows(AllocationLimitException.class, () -> child.allocate(200));
      assertEquals("executor/reader", overChild.allocator());
      assertEquals(200, overChild.requested());
      assertEquals(500, overChild.used());
      assertEquals(600, overChild.limit());
      assertTrue(overChild.getMessage().contains("executor/reader"), overChild.getMessage());

      HostBuffer b = root.allocate(450);
      AllocationLimitException overRoot =
          assertThrows(AllocationLimitException.class, () -> child.allocate(60));
      assertEquals("executor", overRoot.allocator());
      // A failed reservation leaves no trace in any allocator's accounting.
      assertEquals(500, child.outstandingBytes());
      assertEquals(950, root.outstandingBytes());
      a.close();
      b.close();
      child.close();
    }
  }

  @Test
  void referenceCountingReleasesOnLastClose() {
    try (BufferAllocator root = BufferAllocator.newRoot("rc", 1 << 20)) {
      HostBuffer b = root.allocate(64);
      b.retain();
      assertEquals(2, b.refCount());
      b.close();
      assertEquals(64, root.outstandingBytes());
      b.close();
      assertEquals(0, root.outstandingBytes());
      assertThrows(GpuDirectException.class, b::nioBuffer);
      assertThrows(GpuDirectException.class, b::retain);
      assertThrows(GpuDirectException.class, b::close);
    }
  }

  @Test
  void closingWithLiveBuffersSaysHowManyAndHowMuch() {
    BufferAllocator root = BufferAllocator.newRoot("leaky", 1 << 20);
    HostBuffer a = root.allocate(10);
    HostBuffer b = root.allocate(20);
    MemoryLeakException e = assertThrows(MemoryLeakException.class, root::close);
    assertEquals(2, e.buffers());
    assertEquals(30, e.bytes());
    assertTrue(e.getMessage().contains("2 buffer(s) holding 30 bytes"), e.getMessage());
    assertThrows(MemoryLeakException.class, root::assertNoLeaks);
    a.close();
    b.close();
    root.close();
  }

  @Test
  void closingWithOpenChildrenFails() {
    BufferAllocator root = BufferAllocator.newRoot("parent", 100);
    BufferAllocator child = root.newChildAllocator("kid", 100);
    MemoryLeakException e = assertThrows(MemoryLeakException.class, root::close);
    assertTrue(e.getMessage().contains("parent/kid"), e.getMessage());
    child.close();
    root.close();
    assertThrows(GpuDirectException.class, () -> root.allocate(1));
  }

  @Test
  void processRootCannotBeClosed() {
    BufferAllocator child = BufferAllocator.root().newChildAllocator("t", 10);
    child.close();
    assertThrows(GpuDirectException.class, () -> BufferAllocator.root().close());
    BufferAllocator.root().assertNoLeaks();
  }

  /** Memory another allocator makes counts like a buffer of ours, and is given back once. */
  @Test
  void aChargeCountsAgainstEveryLimitUntilClosedOnce() {
    try (BufferAllocator root = BufferAllocator.newRoot("executor", 1000)) {
      BufferAllocator device = root.newChildAllocator("device", 800);
      Charge body = device.charge(700, "body of t.arrow");
      AllocationLimitException e = assertThrows(AllocationLimitException.class,
          () -> device.charge(200, "body of u.arrow"));
      assertTrue(e.getMessage().contains("'executor/device' (body of u.arrow)"), e.getMessage());
      assertThrows(AllocationLimitException.class, () -> root.allocate(301));
      assertTrue(root.outstanding().contains("body of t.arrow (700 bytes in 'executor/device')"),
          root.outstanding());
      body.close();
      body.close();
      assertEquals(0, root.outstandingBytes());
      HostBuffer b = root.allocate(1000);
      b.close();
      device.close();
    }
  }

  /**
   * The JVM's own count of direct memory: a buffer freed at close gives its bytes back at its
   * last close (not its first, while another owner holds it), with no collection in between.
   */
  @Test
  void aBufferFreedAtCloseGivesItsMemoryBackAtItsLastClose() {
    int size = 32 << 20;
    try (BufferAllocator root = BufferAllocator.newRoot("test", Long.MAX_VALUE)) {
      long before = DirectBytes.used();
      HostBuffer b = root.allocateFreedAtClose(size, "window");
      b.nioBuffer().put(0, (byte) 1);
      assertEquals(before + size, DirectBytes.used());
      b.retain();
      b.close();
      assertEquals(before + size, DirectBytes.used(), "freed while another owner still held it");
      b.close();
      assertEquals(before, DirectBytes.used(), "not freed at its last close");
      assertEquals(0, root.outstandingBytes());
    }
  }

  /**
   * A hold keeps the memory past the owner's close, not the charge: the accounting ends at the
   * owner's close (what leak checks see), the memory at the hold's (what an RDMA provider still
   * writing into it needs).
   */
  @Test
  void aHoldKeepsTheMemoryButNotTheCharge() {
    int size = 32 << 20;
    try (BufferAllocator root = BufferAllocator.newRoot("test", Long.MAX_VALUE)) {
      long before = DirectBytes.used();
      HostBuffer b = root.allocateFreedAtClose(size, "control slots");
      HostBuffer.Hold provider = b.hold();
      b.close();
      assertEquals(0, root.outstandingBytes(), "the charge outlived its owner");
      assertEquals(before + size, DirectBytes.used(), "freed under a hold");
      assertNull(b.tryHold(), "a hold taken after the owners closed");
      provider.close();
      assertEquals(before, DirectBytes.used(), "not freed when the last hold closed");
      provider.close();
      assertEquals(before, DirectBytes.used());
    }
  }

  /**
   * The bytes freed at close are counted, in the allocator and its ancestors, once the last hold
   * lets go; a buffer left to the collector is not counted.
   */
  @Test
  void freedBytesCountMemoryFreedAtCloseOnly() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", Long.MAX_VALUE)) {
      BufferAllocator child = root.newChildAllocator("ucx", Long.MAX_VALUE);
      child.allocate(300, "left to the collector").close();
      HostBuffer b = child.allocateFreedAtClose(1000, "frame header");
      HostBuffer.Hold provider = b.hold();
      b.close();
      assertEquals(0, child.freedBytes(), "freed under a hold, or the collector's counted");
      provider.close();
      assertEquals(1000, child.freedBytes());
      assertEquals(1000, root.freedBytes(), "not counted in the parent");
      child.close();
    }
  }

  /** With no hold open the memory goes at the owner's close; a hold after that is refused by name. */
  @Test
  void aHoldAfterTheLastCloseIsRefused() {
    try (BufferAllocator root = BufferAllocator.newRoot("test", Long.MAX_VALUE)) {
      long before = DirectBytes.used();
      HostBuffer b = root.allocateFreedAtClose(1 << 20, "control slots");
      b.tryHold().close();
      b.close();
      assertEquals(before, DirectBytes.used());
      GpuDirectException e = assertThrows(GpuDirectException.class, b::hold);
      assertTrue(e.getMessage().contains("already closed"), e.getMessage());
    }
  }
}
