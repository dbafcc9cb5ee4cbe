package io.gpudirect.transport.tcp;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.CorruptFrameException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.tls.NotTlsException;
import io.gpudirect.tls.TlsChannel;
import io.gpudirect.transport.AuthenticationException;
import io.gpudirect.transport.ConnectFailedException;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.CorruptAnswerException;
import io.gpudirect.transport.LoginsThrottledException;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.TlsMismatchException;
import io.gpudirect.transport.TransportException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * The start of a TCP connection: connect, TLS where asked, then HELLO and, when the server
 * requires a secret, proofs both ways (see docs/protocol.md), all bounded by one deadline.
 */
final class TcpHandshake {
  private TcpHandshake() {}

  /** A connection past its handshake: the socket, what to read and write (TLS or the socket), the server's HELLO_ACK. */
  record Done(SocketChannel channel, ByteChannel wire, HelloAck ack) {}

  /**
   * Connects to {@code peer} and shakes hands (TLS first where asked, then HELLO and the
   * secret's proofs both ways), all within {@code options.connectTimeout()}. On failure the
   * socket is closed and the error names the server and what to check.
   */
  static Done connect(InetSocketAddress peer, ConnectionOptions options, ConnectionThreads threads) {
    String server = TcpConnection.describe(peer);
    SocketChannel ch = null;
    int timeoutMs = (int) Math.max(1, options.connectTimeout().toMillis());
    // SO_TIMEOUT bounds each read, not the handshake: a server that sends a byte now and then
    // would hold it forever. At the deadline the socket is closed, which ends any read.
    AtomicBoolean late = new AtomicBoolean();
    ScheduledFuture<?> deadline = null;
    try {
      ch = SocketChannel.open();
      SocketChannel opened = ch;
      deadline = threads.deadline(() -> {
        late.set(true);
        closeQuietly(opened);
      }, timeoutMs);
      ch.socket().connect(peer, timeoutMs);
      ch.socket().setTcpNoDelay(true);
      // Handshake reads go through the socket adaptor, whose reads honour SO_TIMEOUT.
      ch.socket().setSoTimeout(timeoutMs);
      ByteChannel wire = ch;
      ReadableByteChannel in = Channels.newChannel(ch.socket().getInputStream());
      if (options.tls() != null) {
        TlsChannel tls = startTls(ch, peer, server, options);
        wire = tls;
        in = tls;
      }
      HelloAck ack;
      try {
        ack = handshake(in, wire, server, options);
      } catch (CorruptFrameException e) {
        throw new CorruptAnswerException("Corrupt answer from gpudirect server " + server
            + " in the handshake: " + e.getMessage(), e);
      }
      ch.socket().setSoTimeout(0);
      if (!deadline.cancel(false)) {
        throw new IOException("closed at the deadline");
      }
      return new Done(ch, wire, ack);
    } catch (IOException e) {
      closeQuietly(ch);
      if (late.get()) {
        throw new ConnectFailedException(server, "the connection and handshake did not complete"
            + " within connectTimeout (" + options.connectTimeout() + "); the server is"
            + " overloaded, or not answering as a gpudirect server does", e);
      }
      throw new ConnectFailedException(server, whyNot(e, peer, options), e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      throw e;
    } finally {
      if (deadline != null) {
        deadline.cancel(false);
      }
    }
  }

  /** Why a connect failed, with what to check: the user's first question is whether anything listens. */
  private static String whyNot(IOException e, InetSocketAddress peer, ConnectionOptions options) {
    if (e instanceof ConnectException) {
      boolean remote = peer.getAddress() == null || !peer.getAddress().isLoopbackAddress();
      return "connection refused. Is a gpudirect server running there? (bin/gpudirect server"
          + " --root DIR --port " + peer.getPort() + ")"
          + (remote ? "; a server started without --bind listens on 127.0.0.1 only" : "");
    }
    if (e instanceof SocketTimeoutException) {
      return "no answer within " + options.connectTimeout().toMillis() + " ms (connectTimeout)."
          + " Check the host and port, and that no firewall drops the connection";
    }
    if (e instanceof UnknownHostException) {
      return "unknown host '" + peer.getHostString() + "'";
    }
    return e.toString();
  }

  /** TLS first, so that the gpudirect handshake and everything after it is encrypted. */
  private static TlsChannel startTls(SocketChannel ch, InetSocketAddress peer, String server,
      ConnectionOptions options) throws IOException {
    TlsChannel tls = TlsChannel.client(ch, options.tls(), peer.getHostString(), peer.getPort());
    try {
      tls.handshake();
      return tls;
    } catch (NotTlsException e) {
      ErrorResponse refusal = e.isPlaintextGpudirect() ? plaintextAnswer(e.received(), ch) : null;
      // A TLS server turns connections over its limit away before TLS: worth another try.
      if (refusal != null
          && (refusal.code() == ErrorCode.LIMIT_EXCEEDED || refusal.code() == ErrorCode.SHUTTING_DOWN)) {
        throw new ConnectFailedException(server, refusal.message(), e);
      }
      throw new TlsMismatchException("Cannot connect to gpudirect server " + server + " over TLS: it "
          + "answered in plaintext (" + e.getMessage() + "), so " + options.tlsAdvice(), e);
    } catch (SSLHandshakeException e) {
      throw new AuthenticationException("TLS handshake with gpudirect server " + server
          + " failed: " + e.getMessage() + ". Check that tls.trustStore holds the certificate"
          + " (or its CA) the server was started with, and that the certificate names '"
          + peer.getHostString() + "'");
    } catch (SSLException e) {
      throw new TransportException("TLS with gpudirect server " + server + " failed: "
          + e.getMessage(), e);
    }
  }

  /**
   * What a plaintext gpudirect server said after its magic, in reply to our TLS hello: an ERROR
   * frame, either refusing the connection (over its limit, shutting down) or refusing the TLS
   * hello as not gpudirect. Null when it said something else, or nothing in time.
   */
  private static ErrorResponse plaintextAnswer(byte[] received, SocketChannel ch) {
    try {
      InputStream answer = new SequenceInputStream(new ByteArrayInputStream(received), ch.socket().getInputStream());
      answer.readNBytes(Protocol.MAGIC.length);
      return Frames.read(Channels.newChannel(answer)) instanceof ErrorResponse error ? error : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static HelloAck handshake(ReadableByteChannel in, WritableByteChannel ch, String server,
      ConnectionOptions options) throws IOException {
    byte[] secret = options.secret();
    boolean checksums = options.checksums();
    boolean rdma = options.rdma();
    String secretSetting = options.secretSetting();
    byte[] clientNonce = Auth.newNonce();
    RequestWriter.writeFully(ch, ByteBuffer.wrap(Protocol.MAGIC));
    RequestWriter.writeFully(ch, Frames.encode(new Hello(Protocol.VERSION,
        Protocol.CAP_TCP | (checksums ? Protocol.CAP_CRC32C : 0) | (rdma ? Protocol.CAP_RDMA | Protocol.CAP_RDMA_UCX : 0),
        clientNonce)));
    ByteBuffer magic = ByteBuffer.allocate(Protocol.MAGIC.length);
    Frames.readFully(in, magic, true);
    Protocol.checkMagic(magic.array(), magic.position(), "server " + server);
    Message m = Frames.read(in);
    if (m instanceof ErrorResponse e) {
      throw handshakeError(server, e, secretSetting);
    }
    if (!(m instanceof HelloAck ack)) {
      throw new ProtocolException("Server " + server + " answered HELLO with " + m.type());
    }
    if (ack.version() != Protocol.VERSION) {
      throw new ProtocolException("Server " + server + " chose protocol version "
          + ack.version() + "; this client speaks version " + Protocol.VERSION);
    }
    if (!ack.authRequired()) {
      if (secret != null) {
        throw new AuthenticationException("Gpudirect server " + server + " does not require a"
            + " secret but this client has one (" + secretSetting + "); refusing to trust a"
            + " server that cannot prove it knows the secret. Start the server with the secret"
            + " (--secret-file), or remove it from the client");
      }
      return ack;
    }
    if (secret == null) {
      throw new AuthenticationException("Gpudirect server " + server + " requires a secret:"
          + " set " + secretSetting + " to the server's secret");
    }
    RequestWriter.writeFully(ch, Frames.encode(new AuthResponse(
        Auth.clientProof(secret, ack.serverNonce(), clientNonce))));
    Message answer = Frames.read(in);
    if (answer instanceof ErrorResponse e) {
      throw handshakeError(server, e, secretSetting);
    }
    if (!(answer instanceof AuthOk ok)) {
      throw new ProtocolException("Server " + server + " answered AUTH_RESPONSE with "
          + answer.type());
    }
    if (!Auth.matches(Auth.serverProof(secret, ack.serverNonce(), clientNonce), ok.mac())) {
      throw new AuthenticationException("Server " + server + " could not prove it knows the"
          + " secret; it is not the server it claims to be, or its secret differs");
    }
    return ack;
  }

  private static GpuDirectException handshakeError(String server, ErrorResponse e,
      String secretSetting) {
    if (e.code() == ErrorCode.AUTH_FAILED) {
      // Told here, not in the server's words: the server knows only its bind address (0.0.0.0
      // for every interface) and not where this client's secret came from.
      return new AuthenticationException("Secret rejected by gpudirect server " + server
          + ": the secret in " + secretSetting + " is not the one the server was started with"
          + " (its --secret-file)");
    }
    if (e.code() == ErrorCode.LOGINS_THROTTLED) {
      return new LoginsThrottledException("Gpudirect server " + server + " is throttling logins"
          + " from this client's address, so it did not check the secret in " + secretSetting
          + ": " + e.message() + ". This is not a wrong secret: retry once that wait is over."
          + " Something on this client's address has been logging in with a wrong secret (the"
          + " server's log names the address); until it stops, it keeps the address backing off");
    }
    if (e.code() == ErrorCode.LIMIT_EXCEEDED || e.code() == ErrorCode.SHUTTING_DOWN) {
      return new ConnectFailedException(server, e.message(), null);
    }
    return new ServerErrorException(e.code(), "Gpudirect server " + server
        + " refused the connection: " + e.message());
  }

  static void closeQuietly(SocketChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // nothing left to do
      }
    }
  }
}
