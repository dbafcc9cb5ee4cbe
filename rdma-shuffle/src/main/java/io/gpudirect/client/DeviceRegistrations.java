package io.gpudirect.client;

import io.gpudirect.transport.DeviceRegistration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Device ranges registered with the NIC, kept for reuse: registering GPU memory pins it
 * through nvidia-peermem and costs far more than a read, and cuDF asks for the same RMM
 * buffers' addresses again and again. RMM's pool keeps its memory mapped while it lives, so an
 * address range keeps its pages; if memory is freed to the driver anyway, nvidia-peermem
 * invalidates the registration and the NIC refuses the write (a failed read, never silent
 * corruption). At most {@code capacity} idle ranges are kept, least recently used first out;
 * a range in use by a read is closed only after that read has released it.
 */
final class DeviceRegistrations implements AutoCloseable {
  private final int capacity;
  private final LinkedHashMap<Long, DeviceRegistration> cached = new LinkedHashMap<>(16, 0.75f, true);
  private final Map<DeviceRegistration, Integer> users = new IdentityHashMap<>();
  /** Ranges out of the cache but still in use: closed at their last release. */
  private final List<DeviceRegistration> retired = new ArrayList<>();
  private boolean closed;

  DeviceRegistrations(int capacity) {
    this.capacity = capacity;
  }

  /**
   * A registered range covering {@code [address, address + length)}, cached or new from
   * {@code register}; the caller {@link #release}s it when its read is over.
   */
  synchronized DeviceRegistration acquire(long address, long length, Supplier<DeviceRegistration> register) {
    if (closed) {
      throw new IllegalStateException("device registrations are closed");
    }
    DeviceRegistration r = cached.get(address);
    if (r == null || !r.covers(address, length)) {
      if (r != null) {
        retire(cached.remove(address));
      }
      r = register.get();
      cached.put(address, r);
    }
    users.merge(r, 1, Integer::sum);
    evictIdle();
    return r;
  }

  synchronized void release(DeviceRegistration r) {
    int left = users.merge(r, -1, Integer::sum);
    if (left <= 0) {
      users.remove(r);
      if (retired.remove(r)) {
        r.close();
      }
    }
    evictIdle();
  }

  private void evictIdle() {
    Iterator<Map.Entry<Long, DeviceRegistration>> it = cached.entrySet().iterator();
    while (cached.size() > capacity && it.hasNext()) {
      DeviceRegistration r = it.next().getValue();
      if (!users.containsKey(r)) {
        it.remove();
        r.close();
      }
    }
  }

  private void retire(DeviceRegistration r) {
    if (users.containsKey(r)) {
      retired.add(r);
    } else {
      r.close();
    }
  }

  /** Closes every range; the client closes this only after its reads have ended. */
  @Override
  public synchronized void close() {
    closed = true;
    cached.values().forEach(DeviceRegistration::close);
    retired.forEach(DeviceRegistration::close);
    cached.clear();
    retired.clear();
    users.clear();
  }
}
