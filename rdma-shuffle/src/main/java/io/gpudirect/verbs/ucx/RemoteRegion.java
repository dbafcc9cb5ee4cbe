package io.gpudirect.verbs.ucx;

import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * A peer's region, as its RKEY frame announced it: where it is, how long, and the unpacked key.
 * UCX over TCP or shared memory checks no bounds on a put (a NIC would), so every put is
 * checked against this first. The key is destroyed once revoked and no put uses it.
 * Touched only on the endpoint's loop thread.
 */
final class RemoteRegion {
  final int id;
  final long address;
  final long length;
  /** Whether the peer can take a put from a NIC (its RKEY frame says): else WRITEs go on the stream. */
  final boolean nativePuts;
  final UcpRemoteKey key;
  private int puts;
  private boolean revoked;
  private boolean destroyed;

  RemoteRegion(int id, long address, long length, boolean nativePuts, UcpRemoteKey key) {
    this.id = id;
    this.nativePuts = nativePuts;
    this.address = address;
    this.length = length;
    this.key = key;
  }

  boolean covers(long a, long n) {
    return n >= 0 && a >= address && a - address <= length - n;
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
      key.close();
    }
  }
}
