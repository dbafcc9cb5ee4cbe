package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.tls.TlsContexts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peers that trickle their handshake in (slowloris) against a real server on loopback: each is
 * closed at the handshake deadline however its bytes arrive, and they never keep a client that
 * knows the secret out. Strangers come from 127.0.0.2 and up (loopback on Linux answers every
 * 127/8 address), the good client from 127.0.0.1.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandshakeDeadlineTest {
  static final byte[] SECRET = "handshake-deadline-test-secret".getBytes(StandardCharsets.UTF_8);
  /** Long enough that a TLS client in a cold JVM on a loaded 2-core machine is served well inside it. */
  static final Duration DEADLINE = Duration.ofSeconds(4);
  /** Room for a loaded CI machine between the deadline and the close being seen. */
  static final long SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
  static final long EARLY_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  static final long DRIP_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
  static final int DRIPPERS = 64;
  /** 8 addresses with 8 drippers each: the default budget (64) full, no address over its 16. */
  static final int ADDRESSES = 8;

  @TempDir static Path root;
  @TempDir static Path keys;
  static byte[] data;

  @BeforeAll
  static void files() throws IOException {
    data = TestFiles.write(root.resolve("f.bin"), 300_000, 3);
  }

  @Test
  void aHelloDrippedByteByByteIsClosedAtTheDeadlineWhileAGoodClientIsServed() throws Exception {
    ByteArrayOutputStream hello = new ByteArrayOutputStream();
    hello.write(Protocol.MAGIC);
    ByteBuffer frame = Frames.encode(new Hello(Protocol.VERSION, Protocol.CAP_TCP, Auth.newNonce()));
    hello.write(frame.array(), frame.position(), frame.remaining());
    try (BlockServer server = BlockServer.builder().root(root).port(0).secret(SECRET)
        .maxConnections(DRIPPERS).handshakeTimeout(DEADLINE).build().start()) {
      dripAndServe(server, hello.toByteArray(), ClientConfig.builder().secret(SECRET));
    }
  }

  @Test
  void aTlsClientHelloDrippedByteByByteIsClosedAtTheDeadlineWhileAGoodClientIsServed() throws Exception {
    TestCertificates cert = TestCertificates.create(keys, "server");
    try (BlockServer server = BlockServer.builder().root(root).port(0).secret(SECRET)
        .tls(TlsContexts.server(cert.certificate(), cert.privateKey()))
        .maxConnections(DRIPPERS).handshakeTimeout(DEADLINE).build().start()) {
      byte[] clientHello = clientHello(TlsContexts.client(cert.certificate()), server.port());
      dripAndServe(server, clientHello, ClientConfig.builder().secret(SECRET).tls(true)
          .tlsTrustStore(cert.certificate()));
    }
  }

  @Test
  void oneAddressFillingItsShareClosesOnlyItsOwnOldestAndAGoodClientIsServed() throws Exception {
    // maxConnections 8: before, 8 silent strangers were enough to lock everyone out.
    int strangers = 40;
    int perAddress = 16;
    try (BlockServer server = BlockServer.builder().root(root).port(0).secret(SECRET)
        .maxConnections(8).build().start();
        Peers peers = new Peers(server.port(), strangers, i -> "127.0.0.2")) {
      peers.watchUntil(() -> peers.closedCount() >= strangers - perAddress,
          System.nanoTime() + TimeUnit.SECONDS.toNanos(5), null);
      assertEquals(IntStream.range(0, strangers - perAddress).boxed().toList(), peers.closedIndexes(),
          "the oldest pending handshakes of the full address were closed, and only they");
      assertGoodClientReads(server, ClientConfig.builder().secret(SECRET).streams(2));
      peers.watchUntil(() -> false, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200), null);
      assertEquals(strangers - perAddress, peers.closedCount(),
          "the address's newest " + perAddress + " are still pending: " + peers.closedIndexes());
      String log = logged(server::logSummaries);
      // The first was logged at once, when it was closed; the summary has the rest.
      assertTrue(log.contains("closed 23 more connections in the last") && log.contains("made room for a"
          + " newer handshake (at most 64 pending, 16 per address) (from /127.0.0.2:")
          && log.contains("the first: the oldest of 16 pending from 127.0.0.2"), log);
    }
  }

  /**
   * {@link #DRIPPERS} peers trickle {@code handshake} in, one byte per {@link #DRIP_NANOS}; the
   * server has room for as many connections ({@code maxConnections}), so that, were strangers
   * counted against it, the good client would find it full.
   */
  private static void dripAndServe(BlockServer server, byte[] handshake, ClientConfig.Builder good)
      throws Exception {
    try (Peers peers = new Peers(server.port(), DRIPPERS,
        i -> "127.0.0." + (2 + i % ADDRESSES))) {
      // The good client comes once every dripper holds its place, and must be done well before
      // the first of them reaches the deadline.
      CompletableFuture<Long> served = CompletableFuture.supplyAsync(() -> {
        sleepMillis(DEADLINE.toMillis() / 4);
        assertGoodClientReads(server, good.streams(1));
        return System.nanoTime();
      });
      // Watched past the slack, so that a late close is measured rather than only missed.
      long end = peers.lastConnectedNanos() + DEADLINE.toNanos() + 2 * SLACK_NANOS;
      peers.watchUntil(() -> peers.closedCount() == DRIPPERS, end, handshake);
      long servedAt = served.get(10, TimeUnit.SECONDS);
      for (int i = 0; i < DRIPPERS; i++) {
        assertTrue(peers.closedAt[i] != 0, "dripper " + i + " (" + peers.sent[i] + " bytes sent, one per "
            + TimeUnit.NANOSECONDS.toMillis(DRIP_NANOS) + " ms) is still open "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - peers.connectedAt[i])
            + " ms after it connected; the deadline is " + DEADLINE.toMillis() + " ms");
        long lived = peers.closedAt[i] - peers.connectedAt[i];
        assertTrue(lived <= DEADLINE.toNanos() + SLACK_NANOS, "dripper " + i + " closed after "
            + TimeUnit.NANOSECONDS.toMillis(lived) + " ms; the deadline is " + DEADLINE.toMillis() + " ms");
        assertTrue(peers.sent[i] < handshake.length, "dripper " + i + " never finished its handshake");
      }
      // Closed by the deadline, not before: only the oldest ones, one per connection the good
      // client opened, made room for it (a quarter of the deadline in). The margin allows for
      // this thread being descheduled between a connect and noting its time.
      long early = IntStream.range(0, DRIPPERS).filter(i ->
          peers.closedAt[i] - peers.connectedAt[i] < DEADLINE.toNanos() - EARLY_MARGIN_NANOS).count();
      assertTrue(early <= 2, early + " drippers were closed before the deadline: " + IntStream.range(0, DRIPPERS)
          .filter(i -> peers.closedAt[i] - peers.connectedAt[i] < DEADLINE.toNanos() - EARLY_MARGIN_NANOS)
          .mapToObj(i -> "#" + i + " after " + TimeUnit.NANOSECONDS.toMillis(peers.closedAt[i] - peers.connectedAt[i])
              + " ms, " + peers.sent[i] + " bytes sent").toList());
      long openWhileServed = IntStream.range(0, DRIPPERS).filter(i -> peers.closedAt[i] > servedAt).count();
      assertTrue(openWhileServed >= DRIPPERS - 2, "the good client was served during the drip: "
          + openWhileServed + " drippers were still open then");
      assertTrue(server.context().connections().pending().expired() >= DRIPPERS - 2,
          "the server closed them at their deadline: "
              + server.context().connections().pending().expired());
      long[] lived = IntStream.range(0, DRIPPERS)
          .mapToLong(i -> TimeUnit.NANOSECONDS.toMillis(peers.closedAt[i] - peers.connectedAt[i]))
          .sorted().toArray();
      System.out.printf("%d drippers closed after %d..%d ms (median %d; deadline %d ms); good client"
          + " served %d ms after the last connected%n", DRIPPERS, lived[0], lived[DRIPPERS - 1],
          lived[DRIPPERS / 2], DEADLINE.toMillis(),
          TimeUnit.NANOSECONDS.toMillis(servedAt - peers.lastConnectedNanos()));
    }
  }

  private static void assertGoodClientReads(BlockServer server, ClientConfig.Builder config) {
    try (BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        config.maxRetries(0).connectTimeout(Duration.ofSeconds(5)).build())) {
      ByteBuffer dst = ByteBuffer.allocate(data.length);
      c.read("f.bin", 0, dst);
      assertArrayEquals(data, dst.array());
    }
  }

  /** What {@code action} logs (slf4j-simple writes to System.err). */
  private static String logged(Runnable action) {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      action.run();
    } finally {
      System.setErr(stderr);
    }
    return log.toString(StandardCharsets.UTF_8);
  }

  /** What a TLS client sends first: its ClientHello record. */
  private static byte[] clientHello(SSLContext context, int port) throws IOException {
    SSLEngine engine = context.createSSLEngine("localhost", port);
    engine.setUseClientMode(true);
    engine.beginHandshake();
    ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
    engine.wrap(ByteBuffer.allocate(0), out);
    out.flip();
    byte[] hello = new byte[out.remaining()];
    out.get(hello);
    assertTrue(hello.length > 100 && hello[0] == 22, "a TLS handshake record");
    return hello;
  }

  private static void sleepMillis(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Connections from chosen loopback addresses, watched from one thread: each may be sent a
   * handshake one byte per {@link #DRIP_NANOS}, and the moment the server closes it is noted.
   */
  static final class Peers implements AutoCloseable {
    final SocketChannel[] channels;
    final long[] connectedAt;
    final long[] closedAt;
    final int[] sent;
    private final Selector selector = Selector.open();
    private final ByteBuffer sink = ByteBuffer.allocate(4096);

    Peers(int port, int n, java.util.function.IntFunction<String> from) throws IOException {
      channels = new SocketChannel[n];
      connectedAt = new long[n];
      closedAt = new long[n];
      sent = new int[n];
      for (int i = 0; i < n; i++) {
        SocketChannel ch = SocketChannel.open();
        ch.bind(new InetSocketAddress(from.apply(i), 0));
        ch.connect(new InetSocketAddress("127.0.0.1", port));
        connectedAt[i] = System.nanoTime();
        ch.configureBlocking(false);
        ch.register(selector, SelectionKey.OP_READ, i);
        channels[i] = ch;
      }
    }

    long lastConnectedNanos() {
      return connectedAt[connectedAt.length - 1];
    }

    /** Until {@code done} or {@code end}; drips {@code handshake} when not null. */
    void watchUntil(java.util.function.BooleanSupplier done, long end, byte[] handshake) throws IOException {
      long nextDrip = System.nanoTime();
      while (!done.getAsBoolean()) {
        long now = System.nanoTime();
        if (now - end >= 0) {
          return;
        }
        if (handshake != null && now - nextDrip >= 0) {
          for (int i = 0; i < channels.length; i++) {
            if (closedAt[i] == 0 && sent[i] < handshake.length) {
              try {
                sent[i] += channels[i].write(ByteBuffer.wrap(handshake, sent[i], 1));
              } catch (IOException e) {
                closed(i, channels[i].keyFor(selector));
              }
            }
          }
          nextDrip = now + DRIP_NANOS;
        }
        long wait = Math.min(end - now, handshake != null ? nextDrip - now : end - now);
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
        for (SelectionKey key : selector.selectedKeys()) {
          int i = (Integer) key.attachment();
          try {
            if (channels[i].read(sink.clear()) < 0) {
              closed(i, key);
            }
          } catch (IOException e) {
            closed(i, key);
          }
        }
        selector.selectedKeys().clear();
      }
    }

    private void closed(int i, SelectionKey key) throws IOException {
      if (closedAt[i] == 0) {
        closedAt[i] = System.nanoTime();
      }
      if (key != null) {
        key.cancel();
      }
      channels[i].close();
    }

    int closedCount() {
      return closedIndexes().size();
    }

    List<Integer> closedIndexes() {
      List<Integer> closed = new ArrayList<>();
      for (int i = 0; i < closedAt.length; i++) {
        if (closedAt[i] != 0) {
          closed.add(i);
        }
      }
      return closed;
    }

    @Override
    public void close() throws IOException {
      for (SocketChannel ch : channels) {
        if (ch != null) {
          ch.close();
        }
      }
      selector.close();
    }
  }
}
