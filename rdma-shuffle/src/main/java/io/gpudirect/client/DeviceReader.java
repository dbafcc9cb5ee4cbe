package io.gpudirect.client;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.transport.DeviceRegistration;
import io.gpudirect.transport.DeviceRegistrationException;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * Reads straight into device memory where the transport can ({@link
 * io.gpudirect.transport.Transport#readsIntoDevice}): the range is registered with the NIC
 * (needs nvidia-peermem; registrations are cached, since RMM keeps its pool's memory mapped)
 * and the server writes into it, chunk by chunk, over every connection. The first time device
 * memory cannot be registered, this says why once and declines every later device read.
 */
final class DeviceReader implements AutoCloseable {
  private final String serverName;
  private final ConnectionSlots connections;
  private final ChunkedReads chunks;
  /** Logs the first registration failure once (per client context). */
  private final Consumer<String> logOnce;
  /** Registered device ranges, reused by later device reads. */
  private final DeviceRegistrations registrations = new DeviceRegistrations(64);
  /** Why device memory cannot take the server's writes (set once), or null while it can. */
  private volatile String unavailable;

  DeviceReader(String serverName, ConnectionSlots connections, ChunkedReads chunks,
      Consumer<String> logOnce) {
    this.serverName = serverName;
    this.logOnce = logOnce;
    this.connections = connections;
    this.chunks = chunks;
  }

  /** See {@link RemoteStore#readIntoDevice}; {@code transportReason} is said with a registration failure. */
  boolean read(String path, FileVersion version, long offset, long address, long length,
      String transportReason) {
    connections.checkOpen();
    if (!connections.transport().readsIntoDevice() || unavailable != null || length == 0) {
      return false;
    }
    DeviceRegistration range;
    try {
      range = registrations.acquire(address, length,
          () -> connections.connection().deviceReads().orElseThrow().register(address, length));
    } catch (DeviceRegistrationException e) {
      synchronized (this) {
        if (unavailable == null) {
          unavailable = e.getMessage();
          logOnce.accept("Gpudirect server " + serverName + ": " + transportReason
              + note());
        }
      }
      return false;
    }
    try {
      chunks.readIntoDevice(path, version, offset, range, address, length).join();
    } catch (CompletionException e) {
      throw Failures.rethrowable(Failures.unwrap(e));
    } finally {
      registrations.release(range);
    }
    return true;
  }

  /** What the transport's reason gets added once device memory could not be registered; empty before. */
  String note() {
    String why = unavailable;
    return why == null ? "" : "; GPU memory cannot be registered for RDMA (" + why
        + "): RDMA into registered pinned host chunks, then a copy to the GPU";
  }

  /** Closes every registration; the client closes this only after its reads have ended. */
  @Override
  public void close() {
    registrations.close();
  }
}
