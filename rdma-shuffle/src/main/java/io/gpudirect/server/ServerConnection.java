package io.gpudirect.server;

import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FrameReader;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.RdmaSetup;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.protocol.StatusRequest;
import io.gpudirect.protocol.StatusResponse;
import io.gpudirect.server.rdma.OfferRefusedException;
import io.gpudirect.server.rdma.RdmaService;
import io.gpudirect.tls.NotTlsException;
import io.gpudirect.tls.TlsChannel;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection, served by one thread: handshake, then requests handled and answered
 * strictly in arrival order (clients pipeline them); the windows of SHUFFLE_READs already come
 * in behind the one being answered are found meanwhile ({@link #readAhead}). A refused request
 * gets an ERROR and the connection carries on; a malformed frame gets an ERROR and the
 * connection is closed, since the stream can no longer be trusted to be in step.
 */
final class ServerConnection implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);
  /**
   * Room for any READ (its path is at most 4 KiB) and a few more pipelined behind it; a larger
   * frame (a client's may be up to 1 MiB) is read into a buffer of its own.
   */
  static final int REQUEST_BUFFER_BYTES = 16 * 1024;

  /** The server as its connections see it. */
  private final ServerContext server;
  private final SocketChannel channel;
  private final String peer;
  private final InetAddress peerAddress;
  /** Past the handshake, counted against maxConnections. */
  private boolean served;
  private ReadableByteChannel in;
  /** Where answers go: the socket, or TLS over it. */
  private ByteChannel wire;
  /** Non-null once TLS is up; payloads then go through it instead of sendfile. */
  private TlsChannel tls;
  private boolean crc;
  private long caps;
  /**
   * Queue pairs offered to this connection, and what each reads (for the drain's idle check,
   * which other threads make); they end with it. At most {@link RdmaService#MAX_OFFERS_PER_CONNECTION}.
   */
  private final List<OfferedQueuePair> rdmaOffers = new java.util.concurrent.CopyOnWriteArrayList<>();

  private record OfferedQueuePair(RdmaService.Offer offer, RdmaServedFiles files) {}
  /** Requests are read through it once the handshake is done; charged to the server until the end. */
  private HostBuffer requestBuffer;
  /** The answers to this connection's READs, once the handshake is done. */
  private ReadAnswers reads;
  /** The answers to its SHUFFLE_READs, likewise. */
  private ShuffleAnswers blocks;
  /**
   * Requests read ahead of the one being answered, in arrival order (see {@link #readAhead});
   * a frame found broken there ends the connection at its turn.
   */
  private final ArrayDeque<ReadAhead> ahead = new ArrayDeque<>();

  private record ReadAhead(Message request, ProtocolException broken) {}

  /** What the socket holds unread (plaintext only: TLS records say nothing of whole frames). */
  private InputStream unread;
  /** The files this connection's reads keep open between requests; closed with it. */
  private final OpenFiles openFiles = new OpenFiles();
  /** A request is being answered; a draining server leaves such a connection alone. */
  private volatile boolean busy;
  /** When the connection last finished a request (or was accepted). */
  private volatile long idleSinceNanos = System.nanoTime();

  ServerConnection(ServerContext server, SocketChannel channel, String peer, InetAddress peerAddress)
      throws IOException {
    this.server = server;
    this.channel = channel;
    this.peer = peer;
    this.peerAddress = peerAddress;
    // A READ answer is three writes (header, sendfile, CRC trailer); with Nagle on, the last
    // two of a small read wait for the client's delayed ACK (p50 of a 4 KiB read: 754 us with
    // it, see docs/benchmarks.md). The client's side has it off already.
    channel.socket().setTcpNoDelay(true);
    // No read timeout: the handshake has one deadline, kept by the server's pending handshakes
    // (PendingPeers), which close the socket when it passes.
    this.in = channel;
    this.wire = channel;
  }

  String peer() {
    return peer;
  }

  /** Nanoseconds since the last request was answered; 0 while one is being answered. */
  long idleNanos(long now) {
    long idle = busy ? 0 : now - idleSinceNanos;
    for (OfferedQueuePair q : rdmaOffers) {
      idle = Math.min(idle, q.files().idleNanos(now));
    }
    return idle;
  }

  /** Lets the request being handled finish, then the next read sees end of stream. */
  void stopReading() {
    try {
      channel.shutdownInput();
    } catch (IOException ignored) {
      // already closed
    }
  }

  /** Closes the files kept open for this connection once it has been idle for {@code idleNanos}. */
  void closeIdleFiles(long now, long idleNanos) {
    // A request that starts meanwhile either holds the files already (they stay) or opens
    // them again.
    if (!busy && now - idleSinceNanos >= idleNanos) {
      openFiles.closeUnlessInUse();
    }
  }

  void closeNow() {
    try {
      // A thread blocked in sendfile is not woken by close(), which the channel does not
      // know it is writing through; shutting the socket down makes the send fail at once.
      channel.shutdownOutput();
    } catch (IOException ignored) {
      // not connected any more
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to do
    }
  }

  @Override
  public void run() {
    try {
      if (handshake()) {
        serveRequests();
      }
    } catch (EOFException e) {
      LOG.debug("Client {} disconnected", peer);
    } catch (ProtocolException e) {
      if (served) {
        LOG.warn("Closing connection from {}: {}", peer, e.getMessage());
      } else {
        server.refusals().cause("broke the protocol before authenticating").closed(peer, e.getMessage());
      }
      server.counters().countError();
      sendQuietly(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.BAD_REQUEST,
          e.getMessage()));
    } catch (IOException e) {
      LOG.debug("Connection from {} ended: {}", peer, e.toString());
    } catch (RuntimeException | InternalError e) {
      // InternalError: a mapped file truncated under us (SIGBUS turned into an error).
      LOG.warn("Connection from {} failed", peer, e);
    } finally {
      closeNow();
      openFiles.close();
      if (blocks != null) {
        blocks.close();
      }
      if (reads != null) {
        reads.close();
      }
      if (requestBuffer != null) {
        requestBuffer.close();
      }
      rdmaOffers.forEach(q -> q.offer().close());
      server.connections().ended(this, served);
    }
  }

  private boolean handshake() throws IOException {
    if (server.tls() != null && !startTls()) {
      return false;
    }
    writeFully(ByteBuffer.wrap(Protocol.MAGIC));
    ByteBuffer magic = ByteBuffer.allocate(Protocol.MAGIC.length);
    if (!Frames.readFully(in, magic, true)) {
      return false;
    }
    Protocol.checkMagic(magic.array(), magic.position(), "client " + peer);
    Message first = Frames.read(in);
    if (!(first instanceof Hello hello)) {
      throw new ProtocolException("expected HELLO from client " + peer + ", got " + first.type());
    }
    if (hello.version() != Protocol.VERSION) {
      server.counters().countError();
      writeFully(Frames.encodeVersionRefusal(new ErrorResponse(ErrorResponse.CONNECTION,
          ErrorCode.UNSUPPORTED_VERSION, "Client " + peer + " speaks gpudirect protocol version "
              + hello.version() + "; server " + server.address() + " speaks version "
              + Protocol.VERSION)));
      return false;
    }
    caps = hello.capabilities() & server.capabilities();
    crc = (caps & Protocol.CAP_CRC32C) != 0;
    byte[] secret = server.secret();
    byte[] serverNonce = Auth.newNonce();
    if (secret == null && !enterServed()) {
      return false;
    }
    send(new HelloAck(Protocol.VERSION, caps, secret != null, serverNonce,
        server.limits().maxReadLength()));
    if (secret != null) {
      Message m = Frames.read(in);
      if (!(m instanceof AuthResponse auth)) {
        server.counters().countAuthFailure();
        send(new ErrorResponse(requestId(m), ErrorCode.AUTH_FAILED, "Server "
            + server.address() + " requires authentication before " + m.type()
            + "; set spark.gpudirect.auth.secret to the server's secret"));
        return false;
      }
      byte[] expected = Auth.clientProof(secret, serverNonce, hello.clientNonce());
      boolean matches = Auth.matches(expected, auth.mac());
      LoginThrottle.Decision login = server.logins().decide(peerAddress, matches, peer);
      switch (login.verdict()) {
        case REFUSED -> {
          server.counters().countAuthFailure();
          send(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.LOGINS_THROTTLED,
              login.refusal()));
          return false;
        }
        case FAILED -> {
          server.counters().countAuthFailure();
          send(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.AUTH_FAILED,
              "Secret rejected by server " + server.address()
                  + "; check that spark.gpudirect.auth.secret matches the server's secret"));
          return false;
        }
        case ACCEPTED -> { }
      }
      if (!enterServed()) {
        return false;
      }
      send(new AuthOk(Auth.serverProof(secret, serverNonce, hello.clientNonce())));
    }
    return true;
  }

  /**
   * Leaves the pending handshakes for the served connections; false when the deadline closed
   * this one first, or when maxConnections are served already (the client is told so).
   */
  private boolean enterServed() {
    int limit = server.connections().maxConnections();
    served = server.connections().handshakeDone(this, () -> {
      server.refusals().cause(LimitRefusals.cause(limit, " after its handshake")).closed(peer, null);
      sendQuietly(LimitRefusals.answer(server.address(), limit));
    });
    return served;
  }

  /** TLS before anything else; a plaintext gpudirect client is told, in plaintext, why not. */
  private boolean startTls() throws IOException {
    TlsChannel t = TlsChannel.server(channel, server.tls());
    try {
      t.handshake();
    } catch (NotTlsException e) {
      server.counters().countError();
      server.refusals().cause("did not start TLS").closed(peer, e.getMessage());
      if (e.isPlaintextGpudirect()) {
        sendQuietly(ByteBuffer.wrap(Protocol.MAGIC));
        sendQuietly(Frames.encode(new ErrorResponse(ErrorResponse.CONNECTION,
            ErrorCode.BAD_REQUEST, "Server " + server.address() + " requires TLS: " + server.tlsAdvice())));
        drainBeforeClose();
      }
      return false;
    } catch (javax.net.ssl.SSLException e) {
      server.counters().countError();
      server.refusals().cause("failed its TLS handshake").closed(peer, e.getMessage());
      return false;
    }
    tls = t;
    in = t;
    wire = t;
    return true;
  }

  /** So that closing does not reset the connection before the client has read the error. */
  private void drainBeforeClose() {
    try {
      channel.shutdownOutput();
      channel.socket().setSoTimeout(500);
      byte[] sink = new byte[4096];
      var raw = channel.socket().getInputStream();
      long deadline = System.nanoTime() + 1_000_000_000L;
      while (System.nanoTime() < deadline && raw.read(sink) >= 0) {
        // discard
      }
    } catch (IOException ignored) {
      // the client is gone already
    }
  }

  private void serveRequests() throws IOException {
    // Requests come straight off the channel (or TLS) through one buffer, not frame by frame;
    // only requests come from a client, never raw bytes, so reading ahead is always safe.
    requestBuffer = server.memory().allocate(REQUEST_BUFFER_BYTES, "request buffer of client " + peer);
    FrameReader requests = new FrameReader(tls != null ? tls : channel, requestBuffer.nioBuffer());
    reads = new ReadAnswers(server, channel, wire, tls, crc, peer, openFiles);
    blocks = new ShuffleAnswers(server, reads, crc);
    if (tls == null) {
      unread = channel.socket().getInputStream();
    }
    while (true) {
      Message m;
      ReadAhead next = ahead.poll();
      if (next != null && next.broken() != null) {
        throw next.broken();
      }
      if (next != null) {
        m = next.request();
      } else {
        try {
          m = requests.next();
        } catch (EOFException e) {
          return;
        }
        if (m == null) {
          return;
        }
      }
      busy = true;
      server.counters().countRequest();
      try {
        if (m instanceof ReadRequest r) {
          reads.answer(r);
        } else if (m instanceof ShuffleRead b) {
          readAhead(requests);
          blocks.answer(b);
        } else if (m instanceof StatusRequest st) {
          send(new StatusResponse(st.requestId(), server.stats().get().toMap()));
        } else if (m instanceof StatRequest s) {
          send(new StatResponse(s.requestId(), server.root().stat(s.path())));
        } else if (m instanceof ListRequest l) {
          list(l);
        } else if (m instanceof RdmaSetup setup) {
          setupRdma(setup);
        } else {
          throw new RequestRefusedException(ErrorCode.BAD_REQUEST,
              "Unexpected " + m.type() + " message from a client after the handshake");
        }
      } catch (RequestRefusedException e) {
        server.counters().countError();
        LOG.debug("Refused {} from {}: {}", m.type(), peer, e.getMessage());
        send(new ErrorResponse(requestId(m), e.code(), e.getMessage()));
      } finally {
        idleSinceNanos = System.nanoTime();
        busy = false;
      }
    }
  }

  /**
   * Reads the requests that have come in behind the one about to be answered, never waiting for
   * more, up to {@link ShuffleAnswers#WINDOWS_AHEAD}, and starts finding the windows of the
   * SHUFFLE_READs among them, so that they are found while this answer is sent. Each is still
   * handled at its turn, as if read then.
   */
  private void readAhead(FrameReader requests) throws IOException {
    while (ahead.size() < ShuffleAnswers.WINDOWS_AHEAD
        && (ahead.isEmpty() || ahead.peekLast().broken() == null)) {
      Message m;
      try {
        m = requests.nextIfReady(this::unreadBytes);
      } catch (ProtocolException e) {
        ahead.add(new ReadAhead(null, e));
        return;
      }
      if (m == null) {
        return;
      }
      ahead.add(new ReadAhead(m, null));
      if (m instanceof ShuffleRead b) {
        blocks.findAhead(b);
      }
    }
  }

  /** Bytes the socket holds that a read takes at once; 0 where unknown. */
  private int unreadBytes() {
    try {
      return unread == null ? 0 : unread.available();
    } catch (IOException e) {
      return 0;
    }
  }

  /** Offers a queue pair to this (authenticated) connection; it lives as long as the connection. */
  private void setupRdma(RdmaSetup setup) throws IOException {
    RdmaService rdma = server.rdma();
    if (rdma == null || (caps & server.rdmaCapability()) == 0) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST, "Server " + server.address()
          + " does not serve RDMA" + (rdma == null ? ": " + server.rdmaStatus() : " to a client"
          + " that did not offer it in HELLO"));
    }
    rdmaOffers.removeIf(q -> q.offer().isClosed());
    if (rdmaOffers.size() >= RdmaService.MAX_OFFERS_PER_CONNECTION) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "Server " + server.address()
          + " gives one connection at most " + RdmaService.MAX_OFFERS_PER_CONNECTION
          + " RDMA queue pairs, and this one holds them all");
    }
    RdmaServedFiles files = new RdmaServedFiles(server, peer);
    RdmaService.Offer offer;
    try {
      offer = rdma.offer(peer, files, crc, setup.credits());
    } catch (OfferRefusedException e) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, e.getMessage());
    }
    rdmaOffers.add(new OfferedQueuePair(offer, files));
    send(offer.ack(setup.requestId()));
  }

  /**
   * One page, walked while holding a listing slot and encoded before the slot goes back: a
   * client that does not read its answer then holds one frame of this connection's, not a
   * slot and not the page's entries.
   */
  private void list(ListRequest l) throws IOException {
    ByteBuffer frame;
    try (ListingSlots.Slot slot = server.listingSlots().acquire(server.address(), l.path())) {
      DirectoryWalk walk = new DirectoryWalk(server.limits().maxListPageEntries(), ListResponse.PAGE_BYTES);
      frame = Frames.encode(server.root().list(l.requestId(), l.path(), l.after(), walk));
      server.counters().listingWalked(walk);
    }
    writeFully(frame);
  }

  private static long requestId(Message m) {
    return m instanceof Request r ? r.requestId() : ErrorResponse.CONNECTION;
  }

  private void send(Message m) throws IOException {
    writeFully(Frames.encode(m));
  }

  private void sendQuietly(Message m) {
    try {
      send(m);
    } catch (IOException | RuntimeException ignored) {
      // the peer is gone or broken; closing is all that is left
    }
  }

  private void sendQuietly(ByteBuffer plain) {
    try {
      while (plain.hasRemaining()) {
        channel.write(plain);
      }
    } catch (IOException | RuntimeException ignored) {
      // the peer is gone or broken; closing is all that is left
    }
  }

  private void writeFully(ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      wire.write(buf);
    }
  }
}
