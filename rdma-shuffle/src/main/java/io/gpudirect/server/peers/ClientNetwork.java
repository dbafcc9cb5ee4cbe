package io.gpudirect.server.peers;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * The unit the server's per-address limits count by: an IPv4 address as it is, an IPv6 address
 * by its /64, since one host is usually given a whole /64 and could otherwise take a fresh
 * address for every connection.
 */
public final class ClientNetwork {
  private ClientNetwork() {}

  public static InetAddress of(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return address;
    }
    byte[] prefix = Arrays.copyOf(address.getAddress(), 16);
    Arrays.fill(prefix, 8, 16, (byte) 0);
    try {
      return InetAddress.getByAddress(prefix);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("16 bytes are always an IPv6 address", e);
    }
  }

  /** "127.0.0.1", or "2001:db8:0:1::/64", for logs and messages. */
  public static String show(InetAddress network) {
    return network instanceof Inet6Address ? network.getHostAddress() + "/64" : network.getHostAddress();
  }
}
