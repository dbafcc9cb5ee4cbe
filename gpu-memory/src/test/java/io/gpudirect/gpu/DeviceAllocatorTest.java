package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.DeviceMemoryBuffer;
import io.gpudirect.memory.AllocationLimitException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/**
 * The device allocator's accounting, run without a GPU: the physical allocation is a double
 * (cuDF buffers with no device memory behind them, since there is no GPU here), while the
 * reference counting, slicing and close events are cuDF's own.
 */
class DeviceAllocatorTest {
  /** cuDF {@code DeviceMemoryBuffer}s at made-up addresses, owning nothing: no GPU here. */
  private static final class NoDeviceMemoryDouble implements LongFunction<DeviceMemoryBuffer> {
    private final AtomicLong next = new AtomicLong(1L << 40);
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public DeviceMemoryBuffer apply(long bytes) {
      calls.incrementAndGet();
      // rmmBufferAddress 0: cuDF's cleaner has nothing to free.
      return DeviceMemoryBuffer.fromRmm(next.getAndAdd(bytes + 4096), bytes, 0);
    }
  }

  @Test
  void aBufferStaysChargedUntilItsLastSliceIsClosed() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("device", 1 << 20)) {
      DeviceAllocator device = new DeviceAllocator(accounts, new NoDeviceMemoryDouble());
      DeviceMemoryBuffer body = device.allocate(1000, "body");
      assertEquals(1000, accounts.outstandingBytes());
      DeviceMemoryBuffer column = body.slice(100, 200);
      DeviceMemoryBuffer mask = body.slice(300, 8);
      body.close(); // the reader lets go; cuDF columns still hold the slices
      assertEquals(1000, accounts.outstandingBytes());
      column.close();
      assertEquals(1000, accounts.outstandingBytes());
      mask.close();
      assertEquals(0, accounts.outstandingBytes());
      accounts.assertNoLeaks();
    }
  }

  @Test
  void anAllocationPastTheLimitFailsBeforeTheGpuIsAsked() {
    NoDeviceMemoryDouble rmm = new NoDeviceMemoryDouble();
    try (BufferAllocator root = BufferAllocator.newRoot("executor", Long.MAX_VALUE)) {
      BufferAllocator accounts = root.newChildAllocator("device", 1000);
      DeviceAllocator device = new DeviceAllocator(accounts, rmm);
      try (DeviceMemoryBuffer held = device.allocate(800, "first body")) {
        AllocationLimitException e = assertThrows(AllocationLimitException.class,
            () -> device.allocate(300, "second body"));
        assertEquals("executor/device", e.allocator());
        assertTrue(e.getMessage().contains("Cannot allocate 300 bytes from allocator 'executor/device' (second body)"),
            e.getMessage());
        assertEquals(1, rmm.calls.get(), "the refused buffer was never allocated");
        assertEquals(800, root.outstandingBytes());
      }
      accounts.close();
    }
  }

  @Test
  void aFailedPhysicalAllocationTakesItsChargeBack() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("device", 1 << 20)) {
      DeviceAllocator device = new DeviceAllocator(accounts, bytes -> {
        throw new OutOfMemoryError("RMM could not allocate " + bytes + " bytes (double)");
      });
      assertThrows(OutOfMemoryError.class, () -> device.allocate(500, "body"));
      assertEquals(0, accounts.outstandingBytes());
    }
  }

  @Test
  void aLeakReportNamesTheBufferStillHeld() {
    BufferAllocator accounts = BufferAllocator.newRoot("device", 1 << 20);
    DeviceAllocator device = new DeviceAllocator(accounts, new NoDeviceMemoryDouble());
    DeviceMemoryBuffer body = device.allocate(4096, "Arrow IPC body of gpudirect://h:1/t.arrow");
    DeviceMemoryBuffer kept = body.slice(0, 64);
    body.close();
    MemoryLeakException e = assertThrows(MemoryLeakException.class, accounts::close);
    assertEquals(4096, e.bytes());
    assertTrue(e.getMessage().contains("Arrow IPC body of gpudirect://h:1/t.arrow (4096 bytes"), e.getMessage());
    kept.close();
    accounts.close();
  }

  /** What chargeTable leaves out: ranges inside a live buffer of ours, and only while it lives. */
  @Test
  void knowsWhichDeviceRangesAreItsOwn() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("device", 1 << 20)) {
      DeviceAllocator device = new DeviceAllocator(accounts, new NoDeviceMemoryDouble());
      DeviceMemoryBuffer body = device.allocate(1000, "body");
      long at = body.getAddress();
      assertTrue(device.isOurs(at, 1000));
      assertTrue(device.isOurs(at + 100, 64));
      assertFalse(device.isOurs(at + 990, 64), "runs past the end");
      assertFalse(device.isOurs(at - 1, 10), "starts before it");
      body.close();
      assertFalse(device.isOurs(at, 10), "freed memory is no longer ours");
    }
  }
}
