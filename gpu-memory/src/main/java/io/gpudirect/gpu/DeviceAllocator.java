package io.gpudirect.gpu;

import ai.rapids.cudf.BaseDeviceMemoryBuffer;
import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.MemoryBuffer;
import ai.rapids.cudf.Table;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.Charge;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongFunction;

/**
 * Device memory charged to a node of the allocator tree, so that device bytes have the same
 * limits and leak reports as host bytes.
 *
 * <p>{@link #allocate} hands out RMM buffers, which cuDF can own (as a column's data, or
 * slices of it) and the NIC can register. A buffer stays charged until its last reference is
 * closed: its own and every slice's, wherever cuDF keeps them. cuDF says when through
 * {@link MemoryBuffer.EventHandler}, which this class sets on each buffer it makes; nobody
 * else may replace it (the RAPIDS plugin sets handlers on columns it spills, never on the
 * parent of a slice).
 *
 * <p>Device memory cuDF allocates itself (a decoded Parquet table, the output of a cuDF
 * operation) is allocated inside libcudf, where no Java code sees it, and the RAPIDS plugin
 * refuses columns that carry someone else's event handler. Such memory is charged by whoever
 * holds it, with {@link #chargeTable}, and released when they close the table.
 *
 * <p>Thread-safe.
 */
public final class DeviceAllocator {
  /** Every live buffer this allocator made, by start address, for {@link #chargeTable}. */
  private final ConcurrentSkipListMap<Long, Charge> live = new ConcurrentSkipListMap<>();
  private final ChargedUntilLastClose<DeviceMemoryBuffer> buffers;

  /** Charges {@code accounts} (and its ancestors) for every buffer; RMM allocates them. */
  public DeviceAllocator(BufferAllocator accounts) {
    this(accounts, DeviceMemoryBuffer::allocate);
  }

  /** @param rmm the physical allocation; tests without a GPU pass a double */
  DeviceAllocator(BufferAllocator accounts, LongFunction<DeviceMemoryBuffer> rmm) {
    this.buffers = new ChargedUntilLastClose<>(accounts, rmm, this::remember);
  }

  /** The allocator node charged; its limit bounds the device bytes. */
  public BufferAllocator accounts() {
    return buffers.accounts();
  }

  /**
   * An RMM buffer of {@code bytes}, charged until its last reference (slices included) is
   * closed. Fails with {@link io.gpudirect.memory.AllocationLimitException} before touching
   * the GPU when the charge would pass a limit.
   *
   * @param what names the buffer in leak reports ("Arrow IPC body of FILE", ...)
   */
  public DeviceMemoryBuffer allocate(long bytes, String what) {
    return buffers.allocate(bytes, what);
  }

  private Runnable remember(DeviceMemoryBuffer buffer, Charge charge) {
    long address = buffer.getAddress();
    live.put(address, charge);
    // RMM may hand the address out again once it is freed, before this buffer's handler runs:
    // only this buffer's own entry is removed.
    return () -> live.remove(address, charge);
  }

  /**
   * Charges the device bytes of {@code table} that cuDF allocated, that is all of them except
   * those lying in live buffers of this allocator (zero-copy columns over slices of an
   * {@link #allocate}d buffer are charged there already). The holder closes the charge when
   * it closes the table.
   */
  public Charge chargeTable(Table table, String what) {
    long bytes = 0;
    for (int i = 0; i < table.getNumberOfColumns(); i++) {
      bytes += cudfBytes(table.getColumn(i));
    }
    return buffers.accounts().charge(bytes, what);
  }

  private long cudfBytes(ColumnView column) {
    long bytes = 0;
    // Views of the column's buffers: closing them frees nothing.
    for (BaseDeviceMemoryBuffer buffer : new BaseDeviceMemoryBuffer[] {
        column.getData(), column.getValid(), column.getOffsets()}) {
      if (buffer != null) {
        try (buffer) {
          if (!isOurs(buffer.getAddress(), buffer.getLength())) {
            bytes += buffer.getLength();
          }
        }
      }
    }
    for (int i = 0; i < column.getNumChildren(); i++) {
      try (ColumnView child = column.getChildColumnView(i)) {
        bytes += cudfBytes(child);
      }
    }
    return bytes;
  }

  /** Whether [address, address + length) lies inside a live buffer this allocator made. */
  boolean isOurs(long address, long length) {
    Map.Entry<Long, Charge> below = live.floorEntry(address);
    return below != null && address + length <= below.getKey() + below.getValue().bytes();
  }
}
