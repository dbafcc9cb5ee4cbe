package io.gpudirect.spark.shuffle;

import java.net.InetSocketAddress;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;

/**
 * Where a map output's gpudirect server is: the port travels in the map status's location, as
 * {@code gpudirect=PORT} in its {@link BlockManagerId#topologyInfo()}, so reducers need no RPC and
 * no setting to find it. Spark decides what is local, and what an executor's loss takes with it,
 * by executor id and host; where it compares whole ids (unregistering one map output after a
 * fetch failure) it compares the map status's own location with the one the failure names, and
 * the reader names exactly that. The topology info Spark's replication reads is the block
 * manager's registration, not a map status's, so it is untouched.
 */
final class ServerLocation {
  private static final String KEY = "gpudirect=";

  private ServerLocation() {}

  /** {@code location} naming the server on {@code port} too (after any topology it had). */
  static BlockManagerId withPort(BlockManagerId location, int port) {
    String topology = location.topologyInfo().isDefined() ? location.topologyInfo().get() + ";" : "";
    return BlockManagerId.apply(location.executorId(), location.host(), location.port(),
        Option.apply(topology + KEY + port));
  }

  /** The server of {@code location}, or null when it names none (a map output moved by decommissioning). */
  static InetSocketAddress of(BlockManagerId location) {
    if (location.topologyInfo().isEmpty()) {
      return null;
    }
    String topology = location.topologyInfo().get();
    int at = topology.lastIndexOf(KEY);
    if (at < 0) {
      return null;
    }
    try {
      return new InetSocketAddress(location.host(), Integer.parseInt(topology.substring(at + KEY.length())));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
