package io.gpudirect.verbs.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A peer's packed UCX remote key, checked against UCX's layout before any of it reaches
 * {@code ucp_ep_rkey_unpack}. jucx hands UCX the key's address and no length, and UCX walks the
 * key by its own size bytes: a key that claims 64 memory domains of 255 bytes each sends it
 * 16 KiB past the buffer (a SIGSEGV in {@code ucp_ep_rkey_unpack_internal}, seen on 1.13.1).
 *
 * <p>The layout ({@code ucp_rkey_pack} in src/ucp/core/ucp_rkey.c, the same from 1.13 to 1.20):
 * a 64-bit memory-domain map (host order), a memory-type byte, then for each bit of the map a
 * size byte and that many bytes of the domain's key; UCX 1.20 and later append a system-device
 * byte and, for device memory, a few 3-byte distances. A key is accepted only when every
 * domain's bytes lie inside it, the map names at most {@link #MAX_DOMAINS} domains, the key is at most {@link #MAX_BYTES} long, the memory
 * type is one UCX defines, and what follows the domains is no longer than such a tail.
 *
 * <p>Which of the named domains UCX then unpacks is its own decision: only those the endpoint's
 * wire-up found reachable (the {@code unpack_md_map} of {@code ucp_ep_rkey_unpack_internal}).
 * The map's indices are the peer's numbering of its own domains, so they cannot be held against
 * this context's: two hosts with different NICs number theirs differently.
 *
 * <p>The bytes are kept on the heap until a put needs the key; they are then unpacked from an
 * endpoint's scratch buffer with zeroed padding behind them ({@link #SCRATCH_BYTES}), so that
 * even a UCX that read a little further than the layout says would read that buffer.
 */
final class PackedRemoteKey {
  /** A host with 8 NICs and every shared-memory and GPU domain packs about 16. */
  static final int MAX_DOMAINS = 32;
  /** UCS_MEMORY_TYPE_LAST in UCX 1.20 (host, CUDA, CUDA managed, ROCm x2, RDMA, ZE x3, Gaudi). */
  static final int MEMORY_TYPES = 10;
  /** The system-device byte and up to 64 distances of 3 bytes (UCX 1.20+). */
  static final int MAX_TAIL = 1 + 64 * 3;
  private static final int HEADER = 8 + 1;
  /** The longest key {@link #check} accepts: keys are tens of bytes a domain in practice. */
  static final int MAX_BYTES = 4096;
  private static final int PADDING = 64;
  /** What {@link #unpackFrom} needs: the longest key and zeroed padding behind it. */
  static final int SCRATCH_BYTES = MAX_BYTES + PADDING;

  private final byte[] bytes;

  private PackedRemoteKey(byte[] bytes) {
    this.bytes = bytes;
  }

  /**
   * Checks {@code key} (position to limit) and copies it; throws {@link IllegalArgumentException}
   * saying what is wrong with it.
   */
  static PackedRemoteKey check(ByteBuffer key) {
    ByteBuffer k = key.slice().order(ByteOrder.nativeOrder());
    int n = k.remaining();
    if (n < HEADER || n > MAX_BYTES) {
      throw new IllegalArgumentException("a packed key of " + n + " bytes (" + HEADER + ".."
          + MAX_BYTES + ")");
    }
    long domains = k.getLong(0);
    int count = Long.bitCount(domains);
    if (count == 0 || count > MAX_DOMAINS) {
      throw new IllegalArgumentException("a packed key naming " + count + " memory domains (1.."
          + MAX_DOMAINS + ")");
    }
    int type = Byte.toUnsignedInt(k.get(8));
    if (type >= MEMORY_TYPES) {
      throw new IllegalArgumentException("a packed key of memory type " + type + " (UCX has "
          + MEMORY_TYPES + ")");
    }
    int at = HEADER;
    for (int d = 0; d < count; d++) {
      if (at >= n) {
        throw new IllegalArgumentException("a packed key that ends inside domain " + (d + 1) + " of "
            + count + " (" + n + " bytes)");
      }
      int size = Byte.toUnsignedInt(k.get(at));
      at += 1 + size;
      if (at > n) {
        throw new IllegalArgumentException("a packed key whose domain " + (d + 1) + " of " + count
            + " claims " + size + " bytes past its end (" + n + " bytes)");
      }
    }
    if (n - at > MAX_TAIL) {
      throw new IllegalArgumentException("a packed key with " + (n - at) + " bytes after its "
          + count + " domains (at most " + MAX_TAIL + ")");
    }
    byte[] copy = new byte[n];
    k.get(0, copy);
    return new PackedRemoteKey(copy);
  }

  /**
   * Puts the key at the start of {@code scratch} (a direct buffer of {@link #SCRATCH_BYTES}),
   * zeroes the rest, and returns the view of the key that UCX unpacks.
   */
  ByteBuffer unpackFrom(ByteBuffer scratch) {
    scratch.clear().put(bytes);
    while (scratch.hasRemaining()) {
      scratch.put((byte) 0);
    }
    return scratch.clear().limit(bytes.length);
  }

  int length() {
    return bytes.length;
  }
}
