package io.gpudirect.gpu;

import ai.rapids.cudf.MemoryBuffer;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.Charge;
import java.util.function.LongFunction;

/**
 * How {@link DeviceAllocator} and {@link HostMemoryAllocator} charge a cuDF buffer to a node of
 * the allocator tree: the charge is taken before the physical allocation (so that a limit fails
 * before cuDF or RMM is asked), given back at once if that allocation fails, and otherwise held
 * until cuDF reports the buffer's last reference, slices included, closed.
 *
 * <p>Thread-safe where {@code physical} and {@code registry} are.
 */
final class ChargedUntilLastClose<B extends MemoryBuffer> {
  /** What an allocator keeps of a live buffer; the returned action forgets it at the last close. */
  interface Registry<B> {
    Runnable remember(B buffer, Charge charge);
  }

  private final BufferAllocator accounts;
  private final LongFunction<B> physical;
  private final Registry<B> registry;

  ChargedUntilLastClose(BufferAllocator accounts, LongFunction<B> physical, Registry<B> registry) {
    this.accounts = accounts;
    this.physical = physical;
    this.registry = registry;
  }

  BufferAllocator accounts() {
    return accounts;
  }

  B allocate(long bytes, String what) {
    Charge charge = accounts.charge(bytes, what);
    B buffer;
    try {
      buffer = physical.apply(bytes);
    } catch (RuntimeException | Error e) {
      charge.close();
      throw e;
    }
    buffer.setEventHandler(new ReleaseOnLastClose(charge, registry.remember(buffer, charge)));
    return buffer;
  }
}
