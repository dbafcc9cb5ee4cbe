package io.gpudirect.server;

import io.gpudirect.server.peers.RefusalLog;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connections over {@code maxConnections}, told why before they are closed, each on a short
 * thread of its own so that the accept loop goes on; past {@link #MAX_REJECTING} at once, just
 * closed.
 */
final class LimitRefusals {
  /** Connections turned away at the same time; beyond this they are just closed. */
  private static final int MAX_REJECTING = 8;

  private final String address;
  private final int maxConnections;
  private final ServerCounters counters;
  private final RefusalLog.Cause overLimit;
  private final AtomicInteger rejecting = new AtomicInteger();

  LimitRefusals(String address, int maxConnections, ServerCounters counters, RefusalLog log) {
    this.address = address;
    this.maxConnections = maxConnections;
    this.counters = counters;
    this.overLimit = log.cause(cause(maxConnections, ""));
  }

  /** Why a connection over the limit was closed, for the log; {@code when}: "" or " after its handshake". */
  static String cause(int maxConnections, String when) {
    return "over maxConnections" + when + " (" + maxConnections + " served; --max-connections raises it)";
  }

  /** What a client over the limit is told: the limit, and the server option that raises it. */
  static ErrorResponse answer(String address, int maxConnections) {
    return new ErrorResponse(ErrorResponse.CONNECTION, ErrorCode.LIMIT_EXCEEDED, "Server " + address
        + " has reached its limit of " + maxConnections + " connections; retry later, or raise the"
        + " server's --max-connections");
  }

  /** Says so in protocol terms, then closes {@code ch}. */
  void refuse(SocketChannel ch, String peer) {
    counters.countRejected();
    overLimit.closed(peer, null);
    if (rejecting.incrementAndGet() > MAX_REJECTING) {
      rejecting.decrementAndGet();
      closeQuietly(ch);
      return;
    }
    Thread t = new Thread(() -> {
      try {
        ByteBuffer magic = ByteBuffer.wrap(Protocol.MAGIC);
        ByteBuffer error = Frames.encode(answer(address, maxConnections));
        while (magic.hasRemaining()) {
          ch.write(magic);
        }
        while (error.hasRemaining()) {
          ch.write(error);
        }
        ch.shutdownOutput();
        // Drain what the client already sent so closing does not reset the connection
        // before it has read the error.
        ch.socket().setSoTimeout(1000);
        byte[] sink = new byte[4096];
        var in = ch.socket().getInputStream();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < deadline && in.read(sink) >= 0) {
          // discard
        }
      } catch (IOException ignored) {
        // the client is gone already
      } finally {
        closeQuietly(ch);
        rejecting.decrementAndGet();
      }
    }, "gpudirect-server-reject");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(SocketChannel ch) {
    try {
      ch.close();
    } catch (IOException ignored) {
      // nothing left to do
    }
  }
}
