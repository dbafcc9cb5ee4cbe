package io.gpudirect.server.rdma;

import io.gpudirect.DaemonThreads;
import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.server.peers.PendingPeers;
import io.gpudirect.server.peers.RefusalLog;
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
 * A server's RDMA side: one listener, and one {@link RdmaServerSession} per queue pair. A TCP
 * connection that asks for RDMA gets an {@link Offer} (a single-use token, and the memory its
 * queue pair will serve with); the queue pair that presents the token is bound to that
 * connection's {@link ServedFiles}, so it reads only what the authenticated connection may read.
 *
 * <p>What a stranger can take: a queue pair that has not presented a token is
 * {@link PendingPeers pending}, with a budget of its own ({@link Settings#maxUnbound} in all,
 * {@link Settings#maxUnboundPerAddress} per network), a short deadline, and one 64-byte
 * receive; the memory readers serve with is reserved by offers, which only authenticated
 * connections get, at most {@link #MAX_OFFERS_PER_CONNECTION} each, within
 * {@link Settings#memoryLimit} in all, so that queue pairs can never take the direct memory the
 * TCP path needs.
 */
public final class RdmaService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaService.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Queue pairs one TCP connection may hold; a client asks for one. */
  public static final int MAX_OFFERS_PER_CONNECTION = 4;

  /**
   * {@code credits}: receives kept posted per queue pair (reads outstanding per client
   * connection); {@code chunkBytes} x {@code chunks}: the registered host memory each queue
   * pair fills from files and RDMA-WRITEs from; {@code slotBytes}: one control message;
   * {@code bindTimeout}: how long a queue pair may take to present its token, and an offer to
   * be taken; {@code maxUnbound} and {@code maxUnboundPerAddress}: queue pairs pending their
   * token; {@code memoryLimit}: the bytes all offers' memory may take together.
   */
  public record Settings(int credits, int chunkBytes, int chunks, int slotBytes, Duration bindTimeout,
      int maxUnbound, int maxUnboundPerAddress, long memoryLimit) {
    public static final int MAX_SLOT_BYTES = Protocol.MAX_RDMA_SLOT_BYTES;

    public static Settings defaults() {
      return new Settings(16, 1 << 20, 8, 16 << 10, Duration.ofSeconds(5));
    }

    /** With the default budgets for pending queue pairs and memory. */
    public Settings(int credits, int chunkBytes, int chunks, int slotBytes, Duration bindTimeout) {
      this(credits, chunkBytes, chunks, slotBytes, bindTimeout, 64, 8, defaultMemoryLimit());
    }

    public Settings {
      if (credits <= 0 || chunkBytes <= 0 || chunks <= 0 || slotBytes < 8192
          || slotBytes > MAX_SLOT_BYTES || maxUnbound <= 0 || maxUnboundPerAddress <= 0
          || memoryLimit <= 0) {
        throw new IllegalArgumentException("Bad RDMA settings: credits " + credits + ", chunkBytes "
            + chunkBytes + ", chunks " + chunks + ", slotBytes " + slotBytes + " (8192.."
            + MAX_SLOT_BYTES + "), maxUnbound " + maxUnbound + ", maxUnboundPerAddress "
            + maxUnboundPerAddress + ", memoryLimit " + memoryLimit + " (all positive)");
      }
    }

    public Settings withUnbound(int max, int perAddress, Duration timeout) {
      return new Settings(credits, chunkBytes, chunks, slotBytes, timeout, max, perAddress, memoryLimit);
    }

    public Settings withMemoryLimit(long bytes) {
      return new Settings(credits, chunkBytes, chunks, slotBytes, bindTimeout, maxUnbound,
          maxUnboundPerAddress, bytes);
    }

    /** Half the JVM's direct memory: the rest stays for the TCP path's buffers. */
    static long defaultMemoryLimit() {
      return DirectMemory.max() / 2;
    }
  }

  private final Verbs verbs;
  private final Settings settings;
  private final String server;
  /** What offers reserve for their queue pairs, within {@link Settings#memoryLimit}. */
  private final BufferAllocator sessionMemory;
  /** The receive each pending queue pair gets for its BIND. */
  private final BufferAllocator bindSlots;
  private final Map<String, Offer> offers = new ConcurrentHashMap<>();
  private final Set<RdmaServerSession> sessions = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService timer;
  private final PendingPeers<RdmaServerSession> unbound;
  private final RdmaListener listener;
  private volatile boolean closed;

  /**
   * Starts listening on {@code bind} (port 0 picks one); {@code server} names it in messages,
   * and queue pairs closed before they bound are counted in {@code refusals}.
   */
  public RdmaService(Verbs verbs, InetSocketAddress bind, Settings settings, BufferAllocator allocator,
      String server, RefusalLog refusals) {
    this.verbs = verbs;
    this.settings = settings;
    this.server = server;
    this.sessionMemory = allocator.newChildAllocator("rdma-sessions", settings.memoryLimit());
    this.bindSlots = allocator.newChildAllocator("rdma-unbound",
        (long) (settings.maxUnbound() + 1) * RdmaServerSession.BIND_SLOT_BYTES);
    this.timer = Executors.newSingleThreadScheduledExecutor(
        DaemonThreads.named("gpudirect-server-rdma-timer"));
    this.unbound = new PendingPeers<>("RDMA queue pair", "present its RDMA_BIND",
        settings.maxUnbound(), settings.maxUnboundPerAddress(), settings.bindTimeout(), timer,
        refusals, s -> RdmaEndpoint.describe(s.endpoint().peer()), RdmaServerSession::close);
    try {
      this.listener = verbs.listen(bind, new QueueSizes(settings.credits() + settings.chunks(),
          settings.credits() + 1), this::accept);
    } catch (RuntimeException e) {
      timer.shutdownNow();
      sessionMemory.close();
      bindSlots.close();
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
   * Offers a queue pair to an authenticated TCP connection, reserving the memory it will serve
   * with. Close the offer when that connection ends: its queue pair, bound or not, goes with it.
   * An offer no queue pair takes within {@link Settings#bindTimeout} closes itself.
   *
   * @throws OfferRefusedException when the memory all offers may hold is taken
   */
  public Offer offer(String client, ServedFiles files, boolean crc, int requestedCredits) {
    if (closed) {
      throw new IllegalStateException("RDMA service on port " + port() + " is closed");
    }
    SessionMemory memory;
    try {
      memory = SessionMemory.allocate(sessionMemory, settings);
    } catch (GpuDirectException e) {
      throw new OfferRefusedException("Server " + server + " has no memory left for another RDMA"
          + " queue pair (" + sessionMemory.outstandingBytes() / SessionMemory.bytes(settings)
          + " hold its " + sessionMemory.limit() + " bytes): retry later, or read over TCP", e);
    }
    byte[] token = new byte[RdmaSetupAck.TOKEN_BYTES];
    RANDOM.nextBytes(token);
    Offer o = new Offer(client, token, files, crc, Math.min(requestedCredits, settings.credits()),
        memory);
    offers.put(key(token), o);
    try {
      timer.schedule(o::expire, settings.bindTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      o.close();
      throw new IllegalStateException("RDMA service on port " + port() + " is closed", e);
    }
    return o;
  }

  /** A new queue pair: pending until it presents a token, with one receive for it. */
  private CompletionHandler accept(RdmaEndpoint endpoint) {
    if (closed) {
      throw new IllegalStateException("server closing");
    }
    RdmaServerSession s = new RdmaServerSession(this, endpoint, bindSlots);
    sessions.add(s);
    unbound.admit(s, endpoint.peer().getAddress());
    return s.completions();
  }

  /** An offer taken by a queue pair, and the memory that queue pair now owns. */
  record Binding(Offer offer, SessionMemory memory) {}

  /**
   * The offer with this token, taken for {@code session} (a token works once), with its memory;
   * null when the token is unknown (counted as a refusal) or the session was closed meanwhile
   * (its deadline), or the offer was (it expired, or its connection ended).
   */
  Binding bind(byte[] token, RdmaServerSession session) {
    Offer o = offers.get(key(token));
    if (o == null) {
      refuse(session, "presented an unknown RDMA_BIND token");
      return null;
    }
    if (!unbound.finish(session)) {
      return null;
    }
    o = offers.remove(key(token));
    SessionMemory memory = o == null ? null : o.bindTo(session);
    if (memory == null) {
      // The offer expired or its connection ended in between.
      session.close();
      return null;
    }
    return new Binding(o, memory);
  }

  /** An unbound queue pair sent something other than a valid BIND: counted, not logged, and closed. */
  void refuse(RdmaServerSession session, String why) {
    unbound.refused(session, why);
    session.close();
  }

  void ended(RdmaServerSession s) {
    sessions.remove(s);
    unbound.ended(s);
  }

  /** Queue pairs waiting for their token now. */
  public int unboundQueuePairs() {
    return unbound.size();
  }

  /** Bytes reserved by offers and bound queue pairs now. */
  public long sessionBytes() {
    return sessionMemory.outstandingBytes();
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
    // Every queue pair and offer has given its memory back by now: what is left is a leak, and
    // the server's own allocator reports it when it closes.
    for (BufferAllocator a : java.util.List.of(sessionMemory, bindSlots)) {
      try {
        a.close();
      } catch (io.gpudirect.memory.MemoryLeakException e) {
        LOG.warn("RDMA on {} stopped holding memory it should have given back: {}", server,
            e.getMessage());
      }
    }
  }

  /** A queue pair promised to one TCP connection, and the memory it will serve with. */
  public final class Offer implements AutoCloseable {
    final String client;
    final byte[] token;
    final ServedFiles files;
    final boolean crc;
    final int credits;
    /** Until a queue pair takes it. Guarded by this. */
    private SessionMemory memory;
    private RdmaServerSession session;
    private boolean closed;

    private Offer(String client, byte[] token, ServedFiles files, boolean crc, int credits,
        SessionMemory memory) {
      this.client = client;
      this.token = token;
      this.files = files;
      this.crc = crc;
      this.credits = credits;
      this.memory = memory;
    }

    public RdmaSetupAck ack(long requestId) {
      return new RdmaSetupAck(requestId, port(), token.clone(), credits, settings.slotBytes());
    }

    /** Whether it is closed (its queue pair ended with it, or no queue pair took it in time). */
    public synchronized boolean isClosed() {
      return closed;
    }

    /** Binds {@code s} to this offer and hands it the memory, which it then owns; null when closed. */
    private synchronized SessionMemory bindTo(RdmaServerSession s) {
      if (closed) {
        return null;
      }
      session = s;
      SessionMemory m = memory;
      memory = null;
      return m;
    }

    private void expire() {
      boolean taken;
      synchronized (this) {
        taken = session != null;
      }
      if (!taken && offers.remove(key(token)) != null) {
        LOG.debug("RDMA offer to {} expired: no queue pair presented its token within {}", client,
            settings.bindTimeout());
        close();
      }
    }

    /** Ends the queue pair bound to this offer, if any, and frees what it holds. */
    @Override
    public void close() {
      RdmaServerSession s;
      SessionMemory m;
      synchronized (this) {
        closed = true;
        s = session;
        m = memory;
        memory = null;
      }
      offers.remove(key(token));
      if (m != null) {
        m.close();
      }
      if (s != null) {
        s.close();
      }
    }
  }
}
