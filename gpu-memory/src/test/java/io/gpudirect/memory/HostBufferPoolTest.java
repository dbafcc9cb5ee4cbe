package io.gpudirect.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HostBufferPoolTest {
  @Test
  void buffersAreChargedWhileLentOrIdleAndReusedAtMostMaxIdle() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("pool-test", 1 << 20)) {
      HostBufferPool pool = new HostBufferPool(accounts, "send frame", 100, 1);
      HostBuffer a = pool.take();
      HostBuffer b = pool.take();
      assertEquals(200, accounts.outstandingBytes());
      pool.give(a);
      pool.give(b); // no room: closed
      assertEquals(100, accounts.outstandingBytes());
      assertEquals(100, pool.idleBytes());
      assertSame(a, pool.take(), "the idle one is lent again, not a new one");
      assertEquals(0, pool.idleBytes());
      pool.give(a);
      pool.close();
      assertEquals(0, accounts.outstandingBytes());
      accounts.assertNoLeaks();
    }
  }

  @Test
  void aBufferLentWhenThePoolClosesIsClosedWhenGivenBack() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("pool-test", 1 << 20)) {
      HostBufferPool pool = new HostBufferPool(accounts, "read-ahead piece", 64, 4);
      HostBuffer lent = pool.take();
      pool.close();
      assertFalse(HostBufferPool.open().contains(pool));
      MemoryLeakException leak = assertThrows(MemoryLeakException.class, accounts::assertNoLeaks);
      assertTrue(leak.getMessage().contains("read-ahead piece (64 bytes in 'pool-test')"), leak.getMessage());
      pool.give(lent);
      assertEquals(0, accounts.outstandingBytes());
      accounts.assertNoLeaks();
    }
  }

  /** A freed-at-close pool frees what it closes, past maxIdle or at its close, once no hold is open. */
  @Test
  void aFreedAtClosePoolFreesTheBuffersItClosesOnceTheirHoldsLetGo() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("pool-test", 1 << 20)) {
      HostBufferPool pool = HostBufferPool.freedAtClose(accounts, "send frame", 100, 1);
      HostBuffer a = pool.take();
      HostBuffer b = pool.take();
      HostBuffer.Hold sending = b.hold();
      pool.give(a);
      pool.give(b); // no room: closed, its charge back, its memory kept for the hold
      assertEquals(100, accounts.outstandingBytes());
      assertEquals(0, accounts.freedBytes(), "freed under a hold");
      sending.close();
      assertEquals(100, accounts.freedBytes());
      pool.close();
      assertEquals(200, accounts.freedBytes(), "the idle one not freed at the pool's close");
      accounts.assertNoLeaks();
    }
  }

  @Test
  void aPlainPoolLeavesItsMemoryToTheCollector() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("pool-test", 1 << 20)) {
      HostBufferPool pool = new HostBufferPool(accounts, "piece", 100, 0);
      pool.give(pool.take());
      pool.close();
      assertEquals(0, accounts.outstandingBytes());
      assertEquals(0, accounts.freedBytes());
    }
  }

  @Test
  void openPoolsAreListedForLeakChecks() {
    try (BufferAllocator accounts = BufferAllocator.newRoot("pool-test", 1 << 20);
        HostBufferPool pool = new HostBufferPool(accounts, "piece", 8, 1)) {
      assertTrue(HostBufferPool.open().contains(pool));
    }
  }
}
