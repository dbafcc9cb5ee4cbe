package io.gpudirect.tls;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * A blocking TLS byte channel over a connected {@link SocketChannel}, driven by the JDK's
 * {@link SSLEngine}. It stands in for the socket wherever the gpudirect protocol reads and
 * writes, so framing, checksums and authentication run unchanged on top of it.
 *
 * <p>Threads: one reader and any number of writers at once (the engine allows {@code wrap}
 * and {@code unwrap} to run concurrently; writers are serialized here). Raw reads go through
 * the socket's input stream, so {@code SO_TIMEOUT} bounds them (the client's handshake); the
 * server bounds its handshake by closing the socket at a deadline instead.
 *
 * <p>A read into a buffer with room for a whole TLS record is decrypted straight into it;
 * only smaller reads (frame headers) go through this channel's own buffer.
 */
public final class TlsChannel implements ByteChannel {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
  /** Plaintext per socket write: a few records, so that a large write costs few syscalls. */
  private static final int WRITE_BATCH_RECORDS = 4;
  private static final int FILE_SLICE = 256 * 1024;

  private final SocketChannel socket;
  private final InputStream rawIn;
  private final SSLEngine engine;
  private final Object writeLock = new Object();
  /** Ciphertext received, not yet decrypted; kept in write mode (position = end of data). */
  private ByteBuffer netIn;
  /** Plaintext decrypted, not yet read; kept in read mode. */
  private ByteBuffer appIn;
  /** Guarded by writeLock. */
  private ByteBuffer netOut;
  private ByteBuffer fileSlice;
  private boolean receivedAny;

  private TlsChannel(SocketChannel socket, SSLEngine engine) throws IOException {
    this.socket = socket;
    this.rawIn = socket.socket().getInputStream();
    this.engine = engine;
    int packet = engine.getSession().getPacketBufferSize();
    int app = engine.getSession().getApplicationBufferSize();
    this.netIn = ByteBuffer.allocate(packet * 2);
    this.appIn = ByteBuffer.allocate(app).flip();
    this.netOut = ByteBuffer.allocate(packet * WRITE_BATCH_RECORDS);
  }

  /**
   * The client end: checks the server's certificate chain against {@code context}'s trust and
   * that it names {@code host} (the name or address the client dialled).
   */
  public static TlsChannel client(SocketChannel socket, SSLContext context, String host, int port)
      throws IOException {
    SSLEngine engine = context.createSSLEngine(host, port);
    engine.setUseClientMode(true);
    SSLParameters params = engine.getSSLParameters();
    params.setEndpointIdentificationAlgorithm("HTTPS");
    engine.setSSLParameters(params);
    return new TlsChannel(socket, engine);
  }

  /** The server end; clients are not asked for certificates (the shared secret says who they are). */
  public static TlsChannel server(SocketChannel socket, SSLContext context) throws IOException {
    SSLEngine engine = context.createSSLEngine();
    engine.setUseClientMode(false);
    return new TlsChannel(socket, engine);
  }

  /**
   * Runs the TLS handshake to the end. Throws {@link NotTlsException} when the peer speaks
   * plaintext, {@link SSLException} when the handshake fails (an untrusted certificate, no
   * common protocol), {@link SocketTimeoutException} when the peer goes quiet for longer
   * than the socket's {@code SO_TIMEOUT}, and an {@link IOException} when the socket is closed
   * under it (the server's handshake deadline).
   */
  public void handshake() throws IOException {
    engine.beginHandshake();
    HandshakeStatus hs = engine.getHandshakeStatus();
    while (hs != HandshakeStatus.FINISHED && hs != HandshakeStatus.NOT_HANDSHAKING) {
      switch (hs) {
        case NEED_WRAP -> hs = wrapAndSend(EMPTY).getHandshakeStatus();
        case NEED_TASK -> hs = runTasks();
        default -> hs = unwrapForHandshake();
      }
    }
  }

  /** "TLSv1.3 TLS_AES_256_GCM_SHA384", for logs. */
  public String describe() {
    return engine.getSession().getProtocol() + " " + engine.getSession().getCipherSuite();
  }

  private HandshakeStatus unwrapForHandshake() throws IOException {
    SSLEngineResult r = unwrapInto(null);
    switch (r.getStatus()) {
      case BUFFER_UNDERFLOW -> {
        if (fill() < 0) {
          throw new EOFException("the peer closed the connection during the TLS handshake");
        }
      }
      case CLOSED -> throw new SSLException("the peer closed TLS during the handshake");
      default -> { }
    }
    return r.getHandshakeStatus();
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (!dst.hasRemaining()) {
      return 0;
    }
    while (true) {
      if (appIn.hasRemaining()) {
        return drainAppIn(dst);
      }
      boolean direct = dst.remaining() >= engine.getSession().getApplicationBufferSize();
      SSLEngineResult r = unwrapInto(direct ? dst : null);
      afterUnwrap(r.getHandshakeStatus());
      switch (r.getStatus()) {
        case OK -> {
          if (direct && r.bytesProduced() > 0) {
            return r.bytesProduced();
          }
          // Otherwise: plaintext landed in appIn (taken above), or a record without data
          // (a session ticket, a key update) was consumed.
        }
        case BUFFER_UNDERFLOW -> {
          if (fill() < 0) {
            return -1;
          }
        }
        case CLOSED -> {
          return -1;
        }
        case BUFFER_OVERFLOW -> {
          // The session's record size grew: take it through appIn, which grows to fit.
          appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize()).flip();
          SSLEngineResult again = unwrapInto(null);
          afterUnwrap(again.getHandshakeStatus());
        }
      }
    }
  }

  /** Unwraps one record into {@code dst}, or into appIn when {@code dst} is null. */
  private SSLEngineResult unwrapInto(ByteBuffer dst) throws SSLException {
    netIn.flip();
    try {
      if (dst != null) {
        return engine.unwrap(netIn, dst);
      }
      appIn.compact();
      try {
        return engine.unwrap(netIn, appIn);
      } finally {
        appIn.flip();
      }
    } finally {
      netIn.compact();
    }
  }

  /** A TLS 1.3 key update asks for an answer; tasks may be pending after a session ticket. */
  private void afterUnwrap(HandshakeStatus hs) throws IOException {
    while (true) {
      if (hs == HandshakeStatus.NEED_TASK) {
        hs = runTasks();
      } else if (hs == HandshakeStatus.NEED_WRAP) {
        hs = wrapAndSend(EMPTY).getHandshakeStatus();
      } else {
        return;
      }
    }
  }

  private int drainAppIn(ByteBuffer dst) {
    int n = Math.min(dst.remaining(), appIn.remaining());
    ByteBuffer slice = appIn.slice(appIn.position(), n);
    dst.put(slice);
    appIn.position(appIn.position() + n);
    return n;
  }

  /** Reads more ciphertext from the socket; -1 at end of stream. */
  private int fill() throws IOException {
    if (!netIn.hasRemaining()) {
      // A record larger than the buffer: the session's packet size grew.
      ByteBuffer bigger = ByteBuffer.allocate(netIn.capacity() * 2);
      netIn.flip();
      bigger.put(netIn);
      netIn = bigger;
    }
    int n = rawIn.read(netIn.array(), netIn.arrayOffset() + netIn.position(), netIn.remaining());
    if (n > 0) {
      if (!receivedAny) {
        receivedAny = true;
        checkLooksLikeTls(netIn.get(0), netIn.position() + n);
      }
      netIn.position(netIn.position() + n);
    }
    return n;
  }

  /** TLS records begin with a content type of 20..24; a gpudirect plaintext peer sends "GPDR". */
  private void checkLooksLikeTls(byte first, int available) throws NotTlsException {
    if (first < 20 || first > 24) {
      byte[] received = new byte[available];
      netIn.get(0, received);
      throw new NotTlsException(received);
    }
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    int start = src.position();
    synchronized (writeLock) {
      while (src.hasRemaining()) {
        netOut.clear();
        // Several records per socket write.
        while (src.hasRemaining()
            && netOut.remaining() >= engine.getSession().getPacketBufferSize()) {
          SSLEngineResult r = engine.wrap(src, netOut);
          if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
            throw new SSLException("TLS is closed; cannot send");
          }
          if (r.getStatus() != SSLEngineResult.Status.OK) {
            throw new SSLException("TLS could not encrypt: " + r);
          }
        }
        if (netOut.position() == 0) {
          netOut = ByteBuffer.allocate(engine.getSession().getPacketBufferSize() * WRITE_BATCH_RECORDS);
          continue;
        }
        sendNetOut();
      }
    }
    return src.position() - start;
  }

  /**
   * Sends {@code count} bytes of {@code file} from {@code position}: what {@code sendfile} does
   * for a plain socket. The bytes must be encrypted in user space, so they are read in slices.
   */
  public long transferFrom(FileChannel file, long position, long count) throws IOException {
    if (fileSlice == null) {
      fileSlice = ByteBuffer.allocate(FILE_SLICE);
    }
    long sent = 0;
    while (sent < count) {
      fileSlice.clear().limit((int) Math.min(FILE_SLICE, count - sent));
      int n = file.read(fileSlice, position + sent);
      if (n <= 0) {
        break;
      }
      fileSlice.flip();
      while (fileSlice.hasRemaining()) {
        write(fileSlice);
      }
      sent += n;
    }
    return sent;
  }

  private SSLEngineResult wrapAndSend(ByteBuffer src) throws IOException {
    synchronized (writeLock) {
      netOut.clear();
      SSLEngineResult r = engine.wrap(src, netOut);
      if (r.getStatus() == SSLEngineResult.Status.CLOSED && r.bytesProduced() == 0) {
        throw new SSLException("TLS closed during the handshake");
      }
      sendNetOut();
      return r;
    }
  }

  private void sendNetOut() throws IOException {
    netOut.flip();
    while (netOut.hasRemaining()) {
      socket.write(netOut);
    }
  }

  private HandshakeStatus runTasks() {
    Runnable task;
    while ((task = engine.getDelegatedTask()) != null) {
      task.run();
    }
    return engine.getHandshakeStatus();
  }

  @Override
  public boolean isOpen() {
    return socket.isOpen();
  }

  /** Sends close_notify when it can, then closes the socket. */
  @Override
  public void close() throws IOException {
    try {
      engine.closeOutbound();
      if (socket.isOpen()) {
        wrapAndSend(EMPTY);
      }
    } catch (IOException | RuntimeException ignored) {
      // the peer is gone; closing the socket is all that is left
    } finally {
      socket.close();
    }
  }
}
