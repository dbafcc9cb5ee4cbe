package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections over {@code maxConnections}, told why before they are closed, each on a short
 * thread of its own so that the accept loop goes on; past {@link #MAX_REJECTING} at once, just
 * closed.
 */
final class LimitRefusals {
  private static final Logger LOG = LoggerFactory.getLogger(LimitRefusals.class);
  /** Connections turned away at the same time; beyond this they are just closed. */
  private static final int MAX_REJECTING = 8;

  private final String address;
  private final int maxConnections;
  private final ServerCounters counters;
  private final AtomicInteger rejecting = new AtomicInteger();

  LimitRefusals(String address, int maxConnections, ServerCounters counters) {
    this.address = address;
    this.maxConnections = maxConnections;
    this.counters = counters;
  }

  /** Says so in protocol terms, then closes {@code ch}. */
  void refuse(SocketChannel ch, String peer) {
    counters.countRejected();
    LOG.warn("Rejecting {}: {} connections open (maxConnections)", peer, maxConnections);
    if (rejecting.incrementAndGet() > MAX_REJECTING) {
      rejecting.decrementAndGet();
      closeQuietly(ch);
      return;
    }
    Thread t = new Thread(() -> {
      try {
        ByteBuffer magic = ByteBuffer.wrap(Protocol.MAGIC);
        ByteBuffer error = Frames.encode(new ErrorResponse(ErrorResponse.CONNECTION,
            ErrorCode.LIMIT_EXCEEDED, "Server " + address + " has reached its limit of "
                + maxConnections + " connections; retry later or raise maxConnections"));
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
