package io.gpudirect.server.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's RDMA side: one RDMA CM listener, and one {@link RdmaServerSession} per queue pair.
 * A TCP connection that asks for RDMA gets an {@link Offer} (a single-use token); the queue
 * pair that presents the token is bound to that connection's {@link ServedFiles}, so it reads
 * only what the authenticated connection may read.
 */
public final class RdmaService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaService.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * {@code credits}: receives kept posted per queue pair (reads outstanding per client
   * connection); {@code chunkBytes} x {@code chunks}: the registered host memory each queue
   * pair fills from files and RDMA-WRITEs from; {@code slotBytes}: one control message;
   * {@code bindTimeout}: how long a queue pair may take to present its token.
   */
  public record Settings(int credits, int chunkBytes, int chunks, int slotBytes, Duration bindTimeout) {
    public static Settings defaults() {
      return new Settings(16, 1 << 20, 8, 16 << 10, Duration.ofSeconds(10));
    }

    public Settings {
      if (credits <= 0 || chunkBytes <= 0 || chunks <= 0 || slotBytes < 8192) {
        throw new IllegalArgumentException("Bad RDMA settings: credits " + credits + ", chunkBytes "
            + chunkBytes + ", chunks " + chunks + ", slotBytes " + slotBytes + " (at least 8192)");
      }
    }
  }

  private final Verbs verbs;
  private final Settings settings;
  private final BufferAllocator allocator;
  private final Map<String, Offer> offers = new ConcurrentHashMap<>();
  private final Set<RdmaServerSession> sessions = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService timer;
  private final RdmaListener listener;
  private volatile boolean closed;

  /** Starts listening on {@code bind} (port 0 picks one). */
  public RdmaService(Verbs verbs, InetSocketAddress bind, Settings settings, BufferAllocator allocator) {
    this.verbs = verbs;
    this.settings = settings;
    this.allocator = allocator;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gpudirect-server-rdma-timer");
      t.setDaemon(true);
      return t;
    });
    try {
      this.listener = verbs.listen(bind, new QueueSizes(settings.credits() + settings.chunks(),
          settings.credits() + 1), this::accept);
    } catch (RuntimeException e) {
      timer.shutdownNow();
      throw e;
    }
  }

  public int port() {
    return listener.address().getPort();
  }

  public String describe() {
    return verbs.carrier() + " on " + verbs.describe() + " port " + port();
  }

  /** Which kind of listener this is, for the handshake's capability bit. */
  public Verbs.Wire wire() {
    return verbs.wire();
  }

  /** What carries the bytes ("rdma", or e.g. "ucx:tcp"), for the server's status. */
  public String carrier() {
    return verbs.carrier();
  }

  Settings settings() {
    return settings;
  }

  /**
   * Offers a queue pair to an authenticated TCP connection. Close the offer when that
   * connection ends: its queue pair, bound or not, goes with it.
   */
  public Offer offer(String client, ServedFiles files, boolean crc, int requestedCredits) {
    if (closed) {
      throw new IllegalStateException("RDMA service on port " + port() + " is closed");
    }
    byte[] token = new byte[RdmaSetupAck.TOKEN_BYTES];
    RANDOM.nextBytes(token);
    Offer o = new Offer(client, token, files, crc, Math.min(requestedCredits, settings.credits()));
    offers.put(key(token), o);
    return o;
  }

  private CompletionHandler accept(RdmaEndpoint endpoint) {
    if (closed) {
      throw new IllegalStateException("server closing");
    }
    RdmaServerSession s = new RdmaServerSession(this, endpoint, allocator);
    sessions.add(s);
    timer.schedule(() -> {
      if (!s.isBound()) {
        LOG.warn("Closing RDMA queue pair from {}: no RDMA_BIND within {}", endpoint.peer(),
            settings.bindTimeout());
        s.close();
      }
    }, settings.bindTimeout().toMillis(), TimeUnit.MILLISECONDS);
    return s.completions();
  }

  /** The offer with this token, taken (a token works once); null when unknown. */
  Offer take(byte[] token, RdmaServerSession session) {
    Offer o = offers.remove(key(token));
    if (o != null) {
      synchronized (o) {
        if (o.closed) {
          return null;
        }
        o.session = session;
      }
    }
    return o;
  }

  void ended(RdmaServerSession s) {
    sessions.remove(s);
  }

  private static String key(byte[] token) {
    return Arrays.toString(token);
  }

  @Override
  public void close() {
    closed = true;
    listener.close();
    offers.values().forEach(Offer::close);
    for (RdmaServerSession s : sessions) {
      s.close();
    }
    timer.shutdownNow();
  }

  /** A queue pair promised to one TCP connection. */
  public final class Offer implements AutoCloseable {
    final String client;
    final byte[] token;
    final ServedFiles files;
    final boolean crc;
    final int credits;
    private RdmaServerSession session;
    private boolean closed;

    private Offer(String client, byte[] token, ServedFiles files, boolean crc, int credits) {
      this.client = client;
      this.token = token;
      this.files = files;
      this.crc = crc;
      this.credits = credits;
    }

    public RdmaSetupAck ack(long requestId) {
      return new RdmaSetupAck(requestId, port(), token.clone(), credits, settings.slotBytes());
    }

    /** Ends the queue pair bound to this offer, if any, and frees what it holds. */
    @Override
    public void close() {
      RdmaServerSession s;
      synchronized (this) {
        closed = true;
        s = session;
      }
      offers.remove(key(token));
      if (s != null) {
        s.close();
      }
    }
  }
}
