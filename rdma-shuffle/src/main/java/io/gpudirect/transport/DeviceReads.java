package io.gpudirect.transport;

import io.gpudirect.protocol.ReadRequest;
import java.util.concurrent.CompletableFuture;

/**
 * What a connection offers when the server can write straight into device memory (RDMA into
 * GPU memory registered with the NIC): no CPU copy on the client. A transport without it (TCP)
 * leaves the client to read into host memory and copy; see {@link Connection#deviceReads}.
 */
public interface DeviceReads {
  /**
   * Registers {@code [address, address + length)} of device memory for the server to write
   * into; the caller closes the registration after the last read into it. Throws
   * {@link DeviceRegistrationException} when device memory cannot be registered at all (no
   * nvidia-peermem, or a NIC that cannot reach the GPU), which no retry will change.
   */
  DeviceRegistration register(long address, long length);

  /**
   * Reads {@code request}'s bytes into registered memory at {@code address}; the bytes must lie
   * in one of {@code registration}'s {@link DeviceRegistration#pieces}. No checksum is checked:
   * the CPU may not be able to read the memory, and the link's CRCs cover the transfer.
   */
  CompletableFuture<Void> readInto(ReadRequest request, DeviceRegistration registration, long address);
}
