package io.gpudirect.server;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.protocol.StatusRequest;
import io.gpudirect.protocol.StatusResponse;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection, served by one thread: handshake, then requests handled and answered
 * strictly in arrival order (clients pipeline them). A refused request gets an ERROR and the
 * connection carries on; a malformed frame gets an ERROR and the connection is closed, since
 * the stream can no longer be trusted to be in step.
 */
final class ServerConnection implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);

  private final BlockServer server;
  private final SocketChannel channel;
  private final String peer;
  private final ReadableByteChannel in;
  private boolean crc;
  /** A request is being answered; a draining server leaves such a connection alone. */
  private volatile boolean busy;
  /** When the connection last finished a request (or was accepted). */
  private volatile long idleSinceNanos = System.nanoTime();

  ServerConnection(BlockServer server, SocketChannel channel, String peer) throws IOException {
    this.server = server;
    this.channel = channel;
    this.peer = peer;
    // A READ answer is three writes (header, sendfile, CRC trailer); with Nagle on, the last
    // two of a small read wait for the client's delayed ACK (p50 of a 4 KiB read: 754 us with
    // it, see docs/benchmarks.md). The client's side has it off already.
    channel.socket().setTcpNoDelay(true);
    // Reads go through the socket adaptor so SO_TIMEOUT bounds the handshake; writes and
    // sendfile use the channel itself.
    this.in = Channels.newChannel(channel.socket().getInputStream());
  }

  String peer() {
    return peer;
  }

  /** Nanoseconds since the last request was answered; 0 while one is being answered. */
  long idleNanos(long now) {
    return busy ? 0 : now - idleSinceNanos;
  }

  /** Lets the request being handled finish, then the next read sees end of stream. */
  void stopReading() {
    try {
      channel.shutdownInput();
    } catch (IOException ignored) {
      // already closed
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
      LOG.warn("Closing connection from {}: {}", peer, e.getMessage());
      server.countError();
      sendQuietly(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.BAD_REQUEST,
          e.getMessage()));
    } catch (IOException e) {
      LOG.debug("Connection from {} ended: {}", peer, e.toString());
    } catch (RuntimeException | InternalError e) {
      // InternalError: a mapped file truncated under us (SIGBUS turned into an error).
      LOG.warn("Connection from {} failed", peer, e);
    } finally {
      closeNow();
      server.connectionEnded(this);
    }
  }

  private boolean handshake() throws IOException {
    channel.socket().setSoTimeout((int) server.handshakeTimeout().toMillis());
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
      server.countError();
      send(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.UNSUPPORTED_VERSION,
          "Client " + peer + " speaks gpudirect protocol version " + hello.version()
              + "; server " + server.address() + " speaks version " + Protocol.VERSION));
      return false;
    }
    long caps = hello.capabilities() & BlockServer.CAPABILITIES;
    crc = (caps & Protocol.CAP_CRC32C) != 0;
    byte[] secret = server.secret();
    byte[] serverNonce = Auth.newNonce();
    send(new HelloAck(Protocol.VERSION, caps, secret != null, serverNonce,
        server.maxReadLength()));
    if (secret != null) {
      Message m = Frames.read(in);
      if (!(m instanceof AuthResponse auth)) {
        server.countAuthFailure();
        send(new ErrorResponse(requestId(m), ErrorCode.AUTH_FAILED, "Server "
            + server.address() + " requires authentication before " + m.type()
            + "; set spark.gpudirect.auth.secret to the server's secret"));
        return false;
      }
      byte[] expected = Auth.clientProof(secret, serverNonce, hello.clientNonce());
      if (!Auth.matches(expected, auth.mac())) {
        server.countAuthFailure();
        LOG.warn("Client {} failed authentication", peer);
        send(new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.AUTH_FAILED,
            "Secret rejected by server " + server.address()
                + "; check that spark.gpudirect.auth.secret matches the server's secret"));
        return false;
      }
      send(new AuthOk(Auth.serverProof(secret, serverNonce, hello.clientNonce())));
    }
    channel.socket().setSoTimeout(0);
    return true;
  }

  private void serveRequests() throws IOException {
    while (true) {
      Message m;
      try {
        m = Frames.read(in);
      } catch (EOFException e) {
        return;
      }
      busy = true;
      server.countRequest();
      try {
        if (m instanceof ReadRequest r) {
          read(r);
        } else if (m instanceof StatusRequest st) {
          send(new StatusResponse(st.requestId(), server.stats().toMap()));
        } else if (m instanceof StatRequest s) {
          send(new StatResponse(s.requestId(), server.root().stat(s.path())));
        } else if (m instanceof ListRequest l) {
          list(l);
        } else {
          throw new RequestRefusedException(ErrorCode.BAD_REQUEST,
              "Unexpected " + m.type() + " message from a client after the handshake");
        }
      } catch (RequestRefusedException e) {
        server.countError();
        LOG.debug("Refused {} from {}: {}", m.type(), peer, e.getMessage());
        send(new ErrorResponse(requestId(m), e.code(), e.getMessage()));
      } finally {
        idleSinceNanos = System.nanoTime();
        busy = false;
      }
    }
  }

  private void list(ListRequest l) throws IOException {
    List<FileMeta> all = server.root().list(l.path());
    List<FileMeta> page = new ArrayList<>();
    int bytes = 0;
    int i = Math.min(l.startIndex(), all.size());
    for (; i < all.size(); i++) {
      int n = ListResponse.entryLength(all.get(i));
      if (bytes + n > ListResponse.PAGE_BYTES) {
        break;
      }
      bytes += n;
      page.add(all.get(i));
    }
    send(new ListResponse(l.requestId(), page, i < all.size() ? i : -1));
  }

  private void read(ReadRequest r) throws IOException {
    server.readStarted();
    try {
      readCounted(r);
    } finally {
      server.readEnded();
    }
  }

  private void readCounted(ReadRequest r) throws IOException {
    if (r.length() > server.maxReadLength()) {
      throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "READ of " + r.length()
          + " bytes of " + RootDirectory.show(r.path()) + " exceeds the limit of server "
          + server.address() + ": " + server.maxReadLength() + " bytes per request");
    }
    Path file = server.root().regularFile(r.path());
    FileChannel fc;
    try {
      fc = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot open " + RootDirectory.show(r.path()) + ": " + e, e);
    }
    try (fc) {
      long size = fc.size();
      long end = r.offset() + r.length();
      if (r.offset() > size || end > size) {
        throw new RequestRefusedException(ErrorCode.OUT_OF_RANGE, "Read of "
            + RootDirectory.show(r.path()) + " at offset " + r.offset() + " length "
            + r.length() + " runs past the end of the file (" + size + " bytes)");
      }
      send(new ReadData(r.requestId(), r.offset(), r.length()));
      // The checksum is computed on another core while sendfile runs, and trails the payload.
      Future<Integer> checksum = crc ? Checksums.of(fc, r.offset(), r.length()) : null;
      long pos = r.offset();
      while (pos < end) {
        long n = fc.transferTo(pos, end - pos, channel);
        if (n <= 0 && fc.size() < end) {
          // The header promised bytes the file no longer has: the stream cannot be resynced.
          throw new IOException("File " + file + " shrank while being sent to " + peer);
        }
        pos += n;
      }
      if (checksum != null) {
        ByteBuffer trailer = ByteBuffer.allocate(ReadData.TRAILER_BYTES).putInt(Checksums.await(checksum, file));
        trailer.flip();
        while (trailer.hasRemaining()) {
          channel.write(trailer);
        }
      }
      server.countBytesSent(r.length());
    }
  }

  private static long requestId(Message m) {
    if (m instanceof ReadRequest r) {
      return r.requestId();
    }
    if (m instanceof StatRequest s) {
      return s.requestId();
    }
    if (m instanceof ListRequest l) {
      return l.requestId();
    }
    if (m instanceof StatusRequest st) {
      return st.requestId();
    }
    return ErrorResponse.CONNECTION;
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

  private void writeFully(ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      channel.write(buf);
    }
  }
}
