package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.transport.ConnectFailedException;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportException;
import io.gpudirect.transport.rdma.RdmaConnectionException;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's {@link ClientConfig#streams} connections to one server, one per slot (reads pick
 * theirs through {@link StreamQueue}, control calls round-robin): a broken one is replaced
 * when next used, a corrupt one retired. It also hands out the ids of
 * requests, unique over the client's connections, and knows whether the client is closed.
 */
final class ConnectionSlots implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionSlots.class);

  private final InetSocketAddress server;
  private final String serverName;
  private final ClientConfig config;
  private final ClientThreads threads;
  private final Retries retries;
  /** Null without TLS. */
  private final SSLContext tls;
  private final Connection[] slots;
  /**
   * Connections taken out of service by {@link #retire}, until their backstop closes them (most
   * are closed long before, once answered); guarded by {@code slots}.
   */
  private final Set<Connection> retired = new HashSet<>();
  private final AtomicInteger nextSlot = new AtomicInteger();
  private final AtomicInteger connectionSerial = new AtomicInteger();
  private final AtomicLong requestIds = new AtomicLong();
  /** RDMA or TCP; set before any read (a fall back to TCP may replace it while connecting). */
  private volatile Transport transport;
  /** Whether an RDMA failure while connecting is a reason to fall back rather than to retry. */
  private volatile boolean mayFallBack;
  private volatile boolean closed;
  /** The limit the last connection made was told, for when no slot holds one. */
  private volatile int lastMaxReadLength = Integer.MAX_VALUE;

  ConnectionSlots(InetSocketAddress server, String serverName, ClientConfig config, SSLContext tls,
      ClientThreads threads, Retries retries, Transport transport, boolean mayFallBack) {
    this.server = server;
    this.serverName = serverName;
    this.config = config;
    this.threads = threads;
    this.retries = retries;
    this.tls = tls;
    this.slots = new Connection[config.streams()];
    this.transport = transport;
    this.mayFallBack = mayFallBack;
  }

  Transport transport() {
    return transport;
  }

  /** Opens slot {@code i} (retrying as {@link #openWithRetry} does). */
  void open(int i) {
    Connection c = openWithRetry();
    synchronized (slots) {
      slots[i] = c;
    }
  }

  int size() {
    return slots.length;
  }

  /** Connects with {@code fallback} from now on (transport=auto after RDMA failed); no further fall back. */
  void fallBackTo(Transport fallback) {
    transport = fallback;
    mayFallBack = false;
  }

  long nextRequestId() {
    return requestIds.incrementAndGet();
  }

  /** A live connection, round-robin over the slots; a broken one is replaced (one attempt). */
  Connection connection() {
    return connection(Math.floorMod(nextSlot.getAndIncrement(), slots.length));
  }

  /** Whether slot {@code i} holds an open connection: {@link #connection(int)} would not connect. */
  boolean isLive(int i) {
    synchronized (slots) {
      Connection c = slots[i];
      return c != null && c.isOpen();
    }
  }

  /** Slot {@code i}'s connection; a broken one is replaced (one attempt). */
  Connection connection(int i) {
    synchronized (slots) {
      Connection c = slots[i];
      if (c != null && c.isOpen()) {
        return c;
      }
    }
    Connection fresh = connect();
    synchronized (slots) {
      Connection c = slots[i];
      if (closed) {
        fresh.close();
        throw closedError();
      }
      if (c != null && c.isOpen()) {
        fresh.close();
        return c;
      }
      if (c != null) {
        c.close();
      }
      slots[i] = fresh;
      return fresh;
    }
  }

  /**
   * Takes a connection that delivered a corrupt payload out of service: corruption can belong
   * to the path it takes (a bad NIC queue, a middlebox), so the retry, and every later request,
   * goes over a new connection. Reads already sent on it finish, each checked on its own; it is
   * closed as soon as their answers are in, at once when none is awaited
   * ({@link Connection#closeWhenAnswered}), so that a burst of corrupt answers does not hold a
   * connection on the server per mismatch. Its closing after the request timeout stays as the
   * backstop, and is the only close where the transport cannot tell when its answers are in
   * (RDMA). A request sent on it by a stream or a control call that took it from its slot just
   * before it left is answered, or fails as on a lost connection, and is retried as such.
   */
  void retire(Connection conn) {
    synchronized (slots) {
      for (int i = 0; i < slots.length; i++) {
        if (slots[i] == conn) {
          slots[i] = null;
        }
      }
      if (!retired.add(conn)) {
        return;
      }
    }
    ScheduledFuture<?> backstop = closed ? null : threads.schedule(() -> forget(conn),
        config.requestTimeout().toNanos());
    if (backstop == null) {
      // The client is closing: nothing on it is waited for.
      forget(conn);
    } else {
      conn.closeWhenAnswered();
    }
  }

  private void forget(Connection retiredConn) {
    synchronized (slots) {
      retired.remove(retiredConn);
    }
    retiredConn.close();
  }

  /**
   * The largest READ every open connection's server accepts; the last one heard of when no slot
   * holds a connection (all retired after corrupt answers, say).
   */
  int maxReadLength() {
    int max = Integer.MAX_VALUE;
    synchronized (slots) {
      for (Connection c : slots) {
        if (c != null) {
          max = Math.min(max, c.maxReadLength());
        }
      }
    }
    return max == Integer.MAX_VALUE ? lastMaxReadLength : max;
  }

  private Connection connect() {
    String name = "gpudirect-client-reader-" + serverName + "-"
        + connectionSerial.incrementAndGet();
    Connection c = transport.connect(server, new ConnectionOptions(config.secret(),
        config.connectTimeout(), name, config.checksums(), tls)
        .withSecretSetting(config.secretSetting()).withTlsAdvice(config.tlsAdvice()));
    lastMaxReadLength = c.maxReadLength();
    return c;
  }

  private Connection openWithRetry() {
    for (int attempt = 0; ; attempt++) {
      try {
        return connect();
      } catch (TransportException e) {
        // Under transport=auto an RDMA setup failure is a reason to fall back, not to retry.
        if (!retries.allowAfter(attempt, e) || closed || (e instanceof RdmaConnectionException && mayFallBack)) {
          if (e instanceof RdmaConnectionException || attempt == 0) {
            throw e;
          }
          if (e instanceof ConnectFailedException f) {
            throw f.afterAttempts(attempt + 1);
          }
          throw new TransportException(e.getMessage() + " (after " + (attempt + 1) + " attempts)", e);
        }
        LOG.debug("Connecting to {} failed, retrying: {}", serverName, e.getMessage());
        retries.sleepBeforeNext(attempt);
      }
    }
  }

  boolean isClosed() {
    return closed;
  }

  void checkOpen() {
    if (closed) {
      throw closedError();
    }
  }

  GpuDirectException closedError() {
    return new GpuDirectException("BlockClient for gpudirect server " + serverName
        + " is closed");
  }

  /** Refuses new work from now on; false when it was closed already. */
  synchronized boolean markClosed() {
    if (closed) {
      return false;
    }
    closed = true;
    return true;
  }

  /** Closes every connection; whatever is outstanding on them fails. */
  @Override
  public void close() {
    markClosed();
    synchronized (slots) {
      for (Connection c : slots) {
        if (c != null) {
          c.close();
        }
      }
      retired.forEach(Connection::close);
      retired.clear();
    }
  }
}
