package io.gpudirect.transport;

import java.util.List;

/** Device memory registered for a server's writes by {@link DeviceReads#register}; owns the registration. */
public interface DeviceRegistration extends AutoCloseable {
  boolean covers(long address, long length);

  /**
   * Cuts {@code [address, address + length)} (inside this registration) into pieces of at most
   * {@code maxPiece} bytes that one read can fill each: {start, length} pairs in address order.
   */
  List<long[]> pieces(long address, long length, int maxPiece);

  @Override
  void close();
}
