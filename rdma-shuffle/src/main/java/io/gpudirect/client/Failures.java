package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.CorruptAnswerException;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.TlsMismatchException;
import io.gpudirect.transport.TransportException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How the client tells failures apart, in one place for reads, stat, list and connecting: a
 * failure of the path to the server (worth a retry) or an answer (the server refused; final);
 * and the error a caller gets once no retry is left.
 */
final class Failures {
  private Failures() {}

  /** The way to the server failed: a lost or refused connection, a corrupt payload, a broken queue pair. */
  static boolean ofTransport(Throwable err) {
    return err instanceof TransportException;
  }

  /**
   * Worth another attempt: a transport failure other than a timeout (a server too slow to answer
   * one request within the timeout gets no second chance to hold the caller that long again) or
   * TLS on one side only (the same server answers the same way).
   */
  static boolean retryable(Throwable err) {
    return ofTransport(err) && !(err instanceof RequestTimeoutException) && !(err instanceof TlsMismatchException);
  }

  /**
   * The error a caller sees for {@code err}, the last failure of {@code attempts} attempts to
   * {@code what} (the action as the user would say it, naming the path: "list 'dir'").
   */
  static GpuDirectException finalError(String serverName, Throwable err, String path, FileVersion version,
      String what, int attempts) {
    if (err instanceof ServerErrorException s && s.code() == ErrorCode.FILE_CHANGED) {
      return new FileChangedException(serverName, path, version, "Cannot " + what
          + " on gpudirect server " + serverName + ": " + s.getMessage(), s);
    }
    if (err instanceof ServerErrorException s) {
      return new RemoteFileException(s.code(), serverName, path, "Cannot " + what
          + " on gpudirect server " + serverName + ": " + s.getMessage(), s);
    }
    if (err instanceof ConnectionLostException) {
      return new ConnectionLostException("Cannot " + what + " on gpudirect server "
          + serverName + " after " + attempts + " attempt(s): "
          + err.getMessage(), err);
    }
    if (err instanceof CorruptAnswerException) {
      return new CorruptAnswerException("Cannot " + what + " on gpudirect server " + serverName
          + ", still corrupt after " + attempts + " attempt(s): " + err.getMessage(), err);
    }
    if (err instanceof ChecksumMismatchException) {
      return new ChecksumMismatchException(err.getMessage() + "; still wrong after "
          + attempts + " attempt(s)", err);
    }
    if (ofTransport(err)) {
      return new TransportException("Cannot " + what + ": " + err.getMessage(), err);
    }
    if (err instanceof GpuDirectException g) {
      return g;
    }
    return new GpuDirectException("Cannot " + what + " on gpudirect server " + serverName
        + ": " + err, err);
  }

  /** The failure itself, out of the wrappers futures put around it. */
  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** {@code t} to throw from a method without checked exceptions. */
  static RuntimeException rethrowable(Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new GpuDirectException(t.toString(), t);
  }
}
