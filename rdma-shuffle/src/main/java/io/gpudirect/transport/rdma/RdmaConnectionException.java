package io.gpudirect.transport.rdma;

import io.gpudirect.transport.TransportException;
import io.gpudirect.verbs.RdmaException;

/**
 * An RDMA failure on a client's connection to a server, as the transport interface reports
 * failures: a {@link TransportException}, so the client retries it (or, under
 * {@code transport=auto}, falls back to TCP). The verbs' own {@link RdmaException} becomes one
 * at this boundary, keeping its message and phase.
 */
public class RdmaConnectionException extends TransportException {
  private final RdmaException.Phase phase;

  /** {@code peer} in words: "gpudirect server HOST:PORT". */
  public RdmaConnectionException(RdmaException.Phase phase, String peer, String what, Throwable cause) {
    super(RdmaException.message(phase, peer, what), cause);
    this.phase = phase;
  }

  /** The verbs' failure as this client reports it: same message and phase. */
  RdmaConnectionException(RdmaException verbs) {
    super(verbs.getMessage(), verbs);
    this.phase = verbs.phase();
  }

  public RdmaException.Phase phase() {
    return phase;
  }
}
