package io.gpudirect.arrow;

import io.gpudirect.memory.Charge;
import io.gpudirect.options.ExecutorSettings;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.apache.arrow.memory.AllocationListener;
import org.apache.arrow.memory.AllocationOutcome;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The one Arrow root of the connector. Each reader takes a child and closes it, so a reader
 * that leaks a buffer fails loudly on close instead of growing the executor's memory.
 *
 * <p>Arrow's vectors need Arrow's allocator, so the physical allocation stays Arrow's; the
 * accounting is gpu-memory's. Every Arrow buffer is charged to {@code root/arrow} of
 * gpu-memory's tree before Arrow allocates it, so Arrow's host bytes count against the same
 * limits and show in the same leak reports (NoLeaksExtension in tests) as every other buffer.
 * The limit is the executor setting {@code arrowMemoryLimit} ({@link ExecutorSettings}),
 * unlimited by default.
 */
public final class ArrowMemory {
  /** Made on first use, not in a static initializer: a bad limit then fails each read naming its key. */
  private static RootAllocator root;

  private ArrowMemory() {}

  public static BufferAllocator child(String name) {
    return root().newChildAllocator(name, 0, Long.MAX_VALUE);
  }

  private static synchronized RootAllocator root() {
    if (root == null) {
      root = new RootAllocator(new Charges(io.gpudirect.memory.BufferAllocator.root()
          .newChildAllocator("arrow", ExecutorSettings.arrowMemoryLimit())), Long.MAX_VALUE);
    }
    return root;
  }

  /**
   * Charges each Arrow allocation to a node of gpu-memory's tree. Arrow reports a release by
   * size only, and releases exactly the size it allocated (its own accountant relies on it),
   * so charges are kept by size: any charge of that size is as good as another.
   *
   * <p>Two paths escape it, neither taken by the connector: a buffer from an Arrow
   * {@code AllocationReservation} is never announced before it is allocated (so never
   * charged), and a buffer whose reservation succeeded but whose memory the JVM then refused
   * is never released (so its charge stays, and shows as a leak after that OutOfMemoryError).
   */
  static final class Charges implements AllocationListener {
    private final io.gpudirect.memory.BufferAllocator accounts;
    private final Map<Long, Deque<Charge>> bySize = new ConcurrentHashMap<>();

    Charges(io.gpudirect.memory.BufferAllocator accounts) {
      this.accounts = accounts;
    }

    /** Before Arrow allocates: past a limit, the AllocationLimitException reaches Arrow's caller. */
    @Override
    public void onPreAllocation(long size) {
      Charge charge = accounts.charge(size, "Arrow host buffer");
      bySize.computeIfAbsent(size, s -> new ConcurrentLinkedDeque<>()).push(charge);
    }

    @Override
    public boolean onFailedAllocation(long size, AllocationOutcome outcome) {
      giveBack(size);
      return false; // nothing freed here, so Arrow's retry would fail the same way
    }

    @Override
    public void onRelease(long size) {
      giveBack(size);
    }

    private void giveBack(long size) {
      Deque<Charge> charges = bySize.get(size);
      Charge charge = charges == null ? null : charges.poll();
      // None: a reservation's buffer, never charged. Throwing here would break Arrow's release.
      if (charge != null) {
        charge.close();
      }
    }
  }
}
