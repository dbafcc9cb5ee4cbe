package io.gpudirect.server;

import io.gpudirect.GpuDirectException;
import java.util.Locale;

/** Whether a server also serves RDMA ({@code gpudirect server --rdma auto|on|off}). */
public enum RdmaMode {
  /**
   * Serve RDMA when it is RDMA: UCX with a verbs transport, or libdisni and an RDMA device;
   * otherwise log why not and serve TCP.
   */
  AUTO,
  /** Serve RDMA over whatever the provider has (UCX over TCP included), or fail to start saying what is missing. */
  ON,
  OFF;

  public static RdmaMode parse(String value) {
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new GpuDirectException("Unknown RDMA mode '" + value + "': expected auto, on or off");
    }
  }
}
