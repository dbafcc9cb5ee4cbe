package io.gpudirect.transport.rdma;

import io.gpudirect.transport.DeviceRegistration;
import io.gpudirect.verbs.MemoryRegion;
import java.util.ArrayList;
import java.util.List;

/**
 * One address range registered as consecutive regions of at most
 * {@link MemoryRegion#MAX_LENGTH} bytes each ({@code ibv_mr.length} is an int), and the reads
 * that fill it cut so that none straddles two regions. Owns its regions.
 */
public final class RegisteredRange implements DeviceRegistration {
  private final long address;
  private final long length;
  private final List<MemoryRegion> regions;

  private RegisteredRange(long address, long length, List<MemoryRegion> regions) {
    this.address = address;
    this.length = length;
    this.regions = regions;
  }

  /** Registers {@code [address, address + length)} for remote writes, split as needed. */
  public static RegisteredRange register(RdmaConnection connection, long address, long length) {
    return register(connection, address, length, MemoryRegion.MAX_LENGTH);
  }

  static RegisteredRange register(RdmaConnection connection, long address, long length, long maxRegion) {
    if (length <= 0) {
      throw new IllegalArgumentException("cannot register " + length + " bytes");
    }
    List<MemoryRegion> regions = new ArrayList<>();
    try {
      for (long done = 0; done < length; ) {
        long n = Math.min(maxRegion, length - done);
        regions.add(connection.register(address + done, n, true));
        done += n;
      }
    } catch (RuntimeException e) {
      regions.forEach(MemoryRegion::close);
      throw e;
    }
    return new RegisteredRange(address, length, List.copyOf(regions));
  }

  public long address() {
    return address;
  }

  public long length() {
    return length;
  }

  public List<MemoryRegion> regions() {
    return regions;
  }

  @Override
  public boolean covers(long a, long n) {
    return n >= 0 && a >= address && a - address <= length - n;
  }

  /** The region holding all of {@code [a, a + n)}, or null when none does. */
  public MemoryRegion regionFor(long a, long n) {
    for (MemoryRegion r : regions) {
      if (r.covers(a, n)) {
        return r;
      }
    }
    return null;
  }

  /**
   * Cuts {@code [a, a + n)} (inside this range) into pieces of at most {@code maxPiece} bytes,
   * none crossing a region boundary (one RDMA_READ writes into one region): {start, length}
   * pairs in address order.
   */
  @Override
  public List<long[]> pieces(long a, long n, int maxPiece) {
    if (!covers(a, n)) {
      throw new IllegalArgumentException(n + " bytes at 0x" + Long.toHexString(a)
          + " are outside the registered range");
    }
    List<long[]> out = new ArrayList<>();
    long at = a;
    long end = a + n;
    while (at < end) {
      MemoryRegion r = regionFor(at, 1);
      long regionEnd = r.address() + r.length();
      long len = Math.min(Math.min(maxPiece, end - at), regionEnd - at);
      out.add(new long[] {at, len});
      at += len;
    }
    return out;
  }

  @Override
  public void close() {
    regions.forEach(MemoryRegion::close);
  }
}
