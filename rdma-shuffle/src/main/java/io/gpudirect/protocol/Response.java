package io.gpudirect.protocol;

/**
 * A server's answer to one {@link Request}, carrying that request's id. An ERROR about the
 * connection as a whole carries {@link ErrorResponse#CONNECTION} instead.
 */
public interface Response extends Message {
  long requestId();
}
