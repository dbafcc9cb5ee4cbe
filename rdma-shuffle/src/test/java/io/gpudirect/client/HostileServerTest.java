package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.testing.EndlessListingServer;
import io.gpudirect.transport.TransportException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that answers LIST with endless advancing pages: the client gives up at its limits,
 * with an error naming the server, the limit and the option, and holds no more than they
 * allow. Before the limits, {@code gpudirect ls} against such a server grew to 4.4 GB and hung.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileServerTest {

  @Test
  void endlessPagesStopAtTheEntryLimitWithTheDefaults() throws Exception {
    // 12,000 entries of ~72 bytes (path and version) fill most of one 1 MiB frame.
    try (EndlessListingServer hostile = new EndlessListingServer(12_000, Duration.ZERO);
        BlockClient c = connect(hostile, ClientConfig.builder())) {
      long before = liveHeap();
      AtomicLong peak = new AtomicLong();
      AtomicBoolean done = new AtomicBoolean();
      Thread sampler = new Thread(() -> {
        while (!done.get()) {
          peak.accumulateAndGet(liveHeap() - before, Math::max);
          sleep(1000);
        }
      });
      sampler.start();
      long t0 = System.nanoTime();
      ListingLimitException e;
      try {
        e = assertThrows(ListingLimitException.class, () -> c.list("/"));
      } finally {
        done.set(true);
        sampler.join();
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(ListingLimitException.Limit.ENTRIES, e.limit());
      assertTrue(e.getMessage().contains("127.0.0.1:" + hostile.port())
          && e.getMessage().contains("more than 1000000 entries")
          && e.getMessage().contains("listing.maxEntries"), e.getMessage());
      System.out.printf("HostileServerTest: refused after %d ms, live heap grew by at most %d MiB%n",
          ms, peak.get() >> 20);
      // 1,000,000 entries of ~40-byte paths, held until the limit: a bounded few hundred MiB.
      assertTrue(peak.get() < 512L << 20, "live heap grew by " + (peak.get() >> 20) + " MiB");
    }
  }

  @Test
  void endlessPagesStopAtTheByteLimit() throws Exception {
    try (EndlessListingServer hostile = new EndlessListingServer(1000, Duration.ZERO);
        BlockClient c = connect(hostile, ClientConfig.builder().maxListBytes(1 << 20))) {
      ListingLimitException e = assertThrows(ListingLimitException.class, () -> c.list("x"));
      assertEquals(ListingLimitException.Limit.BYTES, e.limit());
      assertTrue(e.getMessage().contains("more than 1048576 bytes of entries")
          && e.getMessage().contains("listing.maxBytes") && e.getMessage().contains("'x'"),
          e.getMessage());
    }
  }

  @Test
  void slowEndlessPagesStopAtTheListingTimeout() throws Exception {
    try (EndlessListingServer hostile = new EndlessListingServer(10, Duration.ofMillis(300));
        BlockClient c = connect(hostile, ClientConfig.builder().listTimeout(Duration.ofSeconds(1)))) {
      long t0 = System.nanoTime();
      ListingLimitException e = assertThrows(ListingLimitException.class, () -> c.list("/"));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(ListingLimitException.Limit.TIME, e.limit());
      assertTrue(e.getMessage().contains("no last page within PT1S")
          && e.getMessage().contains("listing.timeout"), e.getMessage());
      assertTrue(ms < 5000, "gave up after " + ms + " ms");
    }
  }

  /**
   * A server that sends its HELLO_ACK a byte at a time, each well within the socket timeout,
   * announcing a 1 MiB frame it never finishes: the handshake ends at connectTimeout.
   */
  @Test
  void aHandshakeTrickledByteByByteEndsAtTheConnectTimeout() throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open()
        .bind(new InetSocketAddress("127.0.0.1", 0))) {
      Thread trickler = new Thread(() -> {
        try (SocketChannel ch = server.accept()) {
          ch.write(ByteBuffer.wrap(Protocol.MAGIC));
          ByteBuffer frame = ByteBuffer.allocate(1 << 20).putInt((1 << 20) - 4).rewind();
          while (frame.hasRemaining()) {
            ch.write(frame.slice(frame.position(), 1));
            frame.position(frame.position() + 1);
            Thread.sleep(100);
          }
        } catch (IOException | InterruptedException e) {
          // the client gave up
        }
      });
      trickler.setDaemon(true);
      trickler.start();
      long t0 = System.nanoTime();
      TransportException e = assertThrows(TransportException.class, () -> BlockClient.connect(
          (InetSocketAddress) server.getLocalAddress(), ClientConfig.builder().streams(1)
              .transport("tcp").maxRetries(0).connectTimeout(Duration.ofSeconds(1)).build()));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(e.getMessage().contains("did not complete within connectTimeout (PT1S)"),
          e.getMessage());
      assertTrue(ms < 5000, "gave up after " + ms + " ms");
    }
  }

  /** A read is split into requests of at most maxReadLength; a server cannot make that tiny. */
  @Test
  void aTinyMaxReadLengthIsRefused() throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open()
        .bind(new InetSocketAddress("127.0.0.1", 0))) {
      Thread liar = new Thread(() -> {
        try (SocketChannel ch = server.accept()) {
          Frames.readFully(ch, ByteBuffer.allocate(Protocol.MAGIC.length), false);
          Frames.read(ch);
          ch.write(ByteBuffer.wrap(Protocol.MAGIC));
          ch.write(Frames.encode(new HelloAck(Protocol.VERSION, Protocol.CAP_TCP, false,
              Auth.newNonce(), 1)));
          Thread.sleep(5000);
        } catch (IOException | InterruptedException e) {
          // the client gave up
        }
      });
      liar.setDaemon(true);
      liar.start();
      Exception e = assertThrows(Exception.class, () -> BlockClient.connect(
          (InetSocketAddress) server.getLocalAddress(), ClientConfig.builder().streams(1)
              .transport("tcp").maxRetries(0).build()));
      assertTrue(e.getMessage().contains("maxReadLength must be at least 65536: 1"),
          e.getMessage());
    }
  }

  private static BlockClient connect(EndlessListingServer s, ClientConfig.Builder config)
      throws Exception {
    return BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
        config.streams(1).transport("tcp").build());
  }

  private static long liveHeap() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
