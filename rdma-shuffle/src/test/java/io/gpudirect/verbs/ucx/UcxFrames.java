package io.gpudirect.verbs.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/** Frames as {@link UcxEndpoint} reads them off the stream, built by hand for hostile peers. */
final class UcxFrames {
  static final int SEND = 1;
  static final int RKEY = 2;
  static final int REVOKE = 3;
  static final int WRITE = UcxEndpoint.WRITE;

  private UcxFrames() {}

  /** kind, length, then {@code body}. */
  static ByteBuffer frame(int kind, int length, byte[] body) {
    ByteBuffer b = ByteBuffer.allocateDirect(UcxEndpoint.HEADER_BYTES + body.length);
    b.putInt(kind).putInt(length).put(body).flip();
    return b;
  }

  /** A SEND carrying {@code message} (a whole control frame, as ControlSlots sends one). */
  static ByteBuffer send(ByteBuffer message) {
    byte[] body = new byte[message.remaining()];
    message.duplicate().get(body);
    return frame(SEND, body.length, body);
  }

  /** An RKEY frame announcing {@code key} as region {@code id}. */
  static ByteBuffer rkey(int id, long address, long length, int flags, byte[] key) {
    ByteBuffer body = ByteBuffer.allocate(24 + key.length);
    body.putInt(id).putLong(address).putLong(length).putInt(flags).put(key);
    return frame(RKEY, body.capacity(), body.array());
  }

  static ByteBuffer revoke(int id) {
    return frame(REVOKE, 4, ByteBuffer.allocate(4).putInt(id).array());
  }

  /**
   * The key of issue 28's attack: 0xff throughout, so every memory-domain bit is set, the
   * memory type is out of range, and UCX, following the size bytes, reads 64 x 256 bytes past
   * a 64-byte key.
   */
  static byte[] explodingKey() {
    byte[] key = new byte[64];
    Arrays.fill(key, (byte) 0xff);
    return key;
  }

  /**
   * A key with a valid layout and made-up contents: {@code domains} domains of {@code size}
   * bytes each, host memory, in the host's byte order as UCX packs it.
   */
  static byte[] wellFormedKey(int domains, int size, byte fill) {
    ByteBuffer k = ByteBuffer.allocate(9 + domains * (1 + size)).order(ByteOrder.nativeOrder());
    k.putLong(domains == 64 ? -1L : (1L << domains) - 1).put((byte) 0);
    for (int d = 0; d < domains; d++) {
      k.put((byte) size);
      for (int i = 0; i < size; i++) {
        k.put(fill);
      }
    }
    return k.array();
  }
}
