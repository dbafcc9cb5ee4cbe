package io.gpudirect.verbs;

/**
 * Memory registered with the NIC: the NIC may read it ({@code lkey}) and, with remote
 * access, the peer may write it ({@code rkey}). Close it only after every work request that
 * names it has completed; closing deregisters and unpins it.
 */
public interface MemoryRegion extends AutoCloseable {
  /** {@code ibv_mr.length} is a 32-bit int in DiSNI: one region covers at most this much. */
  long MAX_LENGTH = Integer.MAX_VALUE & ~0xFFFL;

  /**
   * Refuses a region no provider can register in one piece, naming the peer it was for: the
   * one check every provider's {@code register} makes first.
   */
  static void checkLength(long length, String peer) {
    if (length <= 0 || length > MAX_LENGTH) {
      throw new RdmaException(RdmaException.Phase.REGISTER, peer, "cannot register " + length
          + " bytes in one region (1.." + MAX_LENGTH + "); split it", null);
    }
  }

  long address();

  long length();

  int lkey();

  int rkey();

  /** True when {@code [address, address + length)} lies inside this region. */
  default boolean covers(long address, long length) {
    return length >= 0 && address >= address() && address - address() <= length() - length;
  }

  @Override
  void close();
}
