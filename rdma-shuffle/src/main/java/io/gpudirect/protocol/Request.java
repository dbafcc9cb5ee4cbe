package io.gpudirect.protocol;

/**
 * A message a client sends expecting an answer. The server echoes {@link #requestId} in the
 * {@link Response} (an ERROR included), so answers may come in any order and each finds its
 * caller.
 */
public interface Request extends Message {
  /** Chosen by the client, unique among its requests in flight on one connection. */
  long requestId();
}
