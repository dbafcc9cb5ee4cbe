package io.gpudirect.verbs.ucx;

import java.nio.ByteBuffer;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * A peer's region, as its RKEY frame announced it: where it is, how long, and its packed key.
 * UCX over TCP or shared memory checks no bounds on a put (a NIC would), so every put is
 * checked against this first.
 *
 * <p>The key is unpacked by UCX only when the first put needs it: a WRITE that travels on the
 * stream needs none, and a side that never puts (a client) never hands a peer's key to native
 * code at all. It is destroyed once revoked and no put uses it. Touched only on the endpoint's
 * loop thread.
 */
final class RemoteRegion {
  final int id;
  final long address;
  final long length;
  /** Whether the peer can take a put from a NIC (its RKEY frame says): else WRITEs go on the stream. */
  final boolean nativePuts;
  private final PackedRemoteKey packed;
  private UcpRemoteKey key;
  private int puts;
  private boolean revoked;
  private boolean destroyed;

  RemoteRegion(int id, long address, long length, boolean nativePuts, PackedRemoteKey packed) {
    this.id = id;
    this.nativePuts = nativePuts;
    this.address = address;
    this.length = length;
    this.packed = packed;
  }

  boolean covers(long a, long n) {
    return n >= 0 && a >= address && a - address <= length - n;
  }

  /**
   * The unpacked key, unpacked on {@code endpoint} from {@code scratch} (see
   * {@link PackedRemoteKey#unpackFrom}) the first time; UCX's error when it refuses it.
   */
  UcpRemoteKey key(UcpEndpoint endpoint, ByteBuffer scratch) {
    if (key == null) {
      key = endpoint.unpackRemoteKey(packed.unpackFrom(scratch));
    }
    return key;
  }

  void putStarted() {
    puts++;
  }

  void putEnded() {
    puts--;
    destroyIfUnused();
  }

  void revoke() {
    revoked = true;
    destroyIfUnused();
  }

  private void destroyIfUnused() {
    if (revoked && puts == 0 && !destroyed) {
      destroyed = true;
      if (key != null) {
        key.close();
      }
    }
  }
}
