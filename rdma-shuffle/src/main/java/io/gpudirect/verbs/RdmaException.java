package io.gpudirect.verbs;

import io.gpudirect.transport.TransportException;

/**
 * An RDMA failure. The message names the peer and the phase, so that "which server, doing
 * what" is answered by the first line a user sees.
 */
public class RdmaException extends TransportException {
  /** Where in the life of a connection it failed. */
  public enum Phase { CONNECT, REGISTER, POST, COMPLETION }

  private final Phase phase;

  /** {@code peer} in words: "gpudirect server HOST:PORT" or "client HOST:PORT". */
  public RdmaException(Phase phase, String peer, String what, Throwable cause) {
    super("RDMA " + phase.name().toLowerCase(java.util.Locale.ROOT) + " failed with " + peer
        + ": " + what, cause);
    this.phase = phase;
  }

  public Phase phase() {
    return phase;
  }
}
