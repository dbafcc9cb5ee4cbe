package io.gpudirect.verbs;

import io.gpudirect.GpuDirectException;

/**
 * An RDMA failure. The message names the peer and the phase, so that "which server, doing
 * what" is answered by the first line a user sees. The client counts it as a transport failure
 * (worth a retry, or under {@code transport=auto} a fall back to TCP); it is not a
 * {@code transport.TransportException} because the server side of the verbs throws it too.
 */
public class RdmaException extends GpuDirectException {
  /** Where in the life of a connection it failed. */
  public enum Phase { CONNECT, REGISTER, POST, COMPLETION }

  private final Phase phase;

  /** {@code peer} in words: "gpudirect server HOST:PORT" or "client HOST:PORT". */
  public RdmaException(Phase phase, String peer, String what, Throwable cause) {
    super(message(phase, peer, what), cause);
    this.phase = phase;
  }

  /** E.g. {@code RDMA register failed with gpudirect server 10.0.0.2:7337: ...}. */
  public static String message(Phase phase, String peer, String what) {
    return "RDMA " + phase.name().toLowerCase(java.util.Locale.ROOT) + " failed with " + peer
        + ": " + what;
  }

  public Phase phase() {
    return phase;
  }
}
