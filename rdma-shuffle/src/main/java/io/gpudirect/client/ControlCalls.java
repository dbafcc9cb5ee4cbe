package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.protocol.StatusRequest;
import io.gpudirect.protocol.StatusResponse;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.RequestTimeoutException;
import io.gpudirect.transport.ServerErrorException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;

/** STAT, LIST and STATUS: one request and one answer each (a listing page by page), retried as reads are. */
final class ControlCalls {
  private final String serverName;
  private final ClientConfig config;
  private final ConnectionSlots connections;
  private final Retries retries;

  ControlCalls(String serverName, ClientConfig config, ConnectionSlots connections, Retries retries) {
    this.serverName = serverName;
    this.config = config;
    this.connections = connections;
    this.retries = retries;
  }

  FileEntry stat(String path) {
    // "access", not "stat": users ran cat, ls or a Spark read; stat is our own first step.
    Message m = call(path, "access '" + path + "'", id -> new StatRequest(id, path), null);
    FileMeta e = ((StatResponse) m).entry();
    return new FileEntry(e.path(), e.length(), e.modifiedMillis(), e.directory(), e.version());
  }

  /** See {@link RemoteStore#status}. */
  Map<String, Long> status() {
    Message m = call("", "read the counters (STATUS)", StatusRequest::new, null);
    return ((StatusResponse) m).counters();
  }

  /** See {@link BlockClient#list}. */
  List<FileEntry> list(String path) {
    ListingBudget budget = new ListingBudget(serverName, path, config);
    List<FileEntry> out = new ArrayList<>();
    String after = ListRequest.FIRST_PAGE;
    while (true) {
      String cursor = after;
      ListResponse page = (ListResponse) call(path, "list '" + path + "'",
          id -> new ListRequest(id, path, cursor), budget);
      budget.take(page);
      for (FileMeta e : page.entries()) {
        requireAfter(e.path(), after, path);
        out.add(new FileEntry(e.path(), e.length(), e.modifiedMillis(), e.directory(), e.version()));
        after = e.path();
      }
      if (page.last()) {
        return out;
      }
      // At its last entry, or past it after names a listing leaves out; a page without
      // entries must still go forward.
      if (page.entries().isEmpty() || !page.cursor().equals(after)) {
        requireAfter(page.cursor(), after, path);
      }
      after = page.cursor();
    }
  }

  /** A listing goes on in order: {@code next} after {@code previous}, or it is broken. */
  private void requireAfter(String next, String previous, String path) {
    if (!previous.isEmpty() && ListingOrder.INSTANCE.compare(next, previous) <= 0) {
      throw new GpuDirectException("Gpudirect server " + serverName + " sent a listing of '"
          + path + "' that does not go on in order: '" + next + "' came after '" + previous
          + "'. The server is broken or not a gpudirect server of this version");
    }
  }

  /**
   * One control call, within the listing's time too when {@code listing} is not null.
   * {@code what}: the action as the user would say it, naming the path ("list 'dir'").
   */
  private Message call(String path, String what, LongFunction<Request> request,
      ListingBudget listing) {
    connections.checkOpen();
    for (int attempt = 0; ; attempt++) {
      Throwable err;
      Connection conn = null;
      long wait = config.requestTimeout().toNanos();
      boolean listingTime = listing != null && listing.nanosLeft() < wait;
      try {
        if (listingTime) {
          wait = listing.nanosLeft();
          if (wait <= 0) {
            throw new TimeoutException();
          }
        }
        conn = connections.connection();
        CompletableFuture<Message> f = conn.call(request.apply(connections.nextRequestId()));
        Message m = f.get(wait, TimeUnit.NANOSECONDS);
        if (m instanceof ErrorResponse e) {
          throw new ServerErrorException(e.code(), e.message());
        }
        return m;
      } catch (TimeoutException e) {
        if (conn != null) {
          conn.abort(new ConnectionLostException("Connection to gpudirect server "
              + serverName + " closed: '" + what + "' timed out", null));
        }
        if (listingTime) {
          throw listing.timedOut();
        }
        throw new RequestTimeoutException("Cannot " + what + " on gpudirect"
            + " server " + serverName + ": no answer within " + config.requestTimeout());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new GpuDirectException("Interrupted: cannot " + what + " on gpudirect server "
            + serverName, e);
      } catch (ExecutionException e) {
        err = Failures.unwrap(e);
      } catch (RuntimeException e) {
        err = e;
      }
      if (!retries.allowAfter(attempt, err) || connections.isClosed()) {
        throw Failures.rethrowable(Failures.finalError(serverName, err, path, FileVersion.ANY, what,
            attempt + 1));
      }
      retries.sleepBeforeNext(attempt);
    }
  }
}
