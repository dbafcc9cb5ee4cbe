package io.gpudirect.client;

import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.TransportException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How the client tells failures apart, in one place for reads, stat, list and connecting: a
 * failure of the path to the server (worth a retry) or an answer (the server refused; final).
 */
final class Failures {
  private Failures() {}

  /** The way to the server failed: a lost or refused connection, a corrupt payload, a broken queue pair. */
  static boolean ofTransport(Throwable err) {
    return err instanceof TransportException;
  }

  /**
   * Worth another attempt: a transport failure other than a timeout (a server too slow to answer
   * one request within the timeout gets no second chance to hold the caller that long again).
   */
  static boolean retryable(Throwable err) {
    return ofTransport(err) && !(err instanceof RequestTimeoutException);
  }

  /** The failure itself, out of the wrappers futures put around it. */
  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
