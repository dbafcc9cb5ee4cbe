package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatusRequest;
import io.gpudirect.protocol.StatusResponse;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** STATUS, the JMX view, and draining on close. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ServerOperationsTest {
  @TempDir
  Path dir;

  @Test
  void closingTheServerEndsItsChecksumThreads() throws Exception {
    int length = 1 << 20;
    byte[] bytes = TestFiles.write(dir.resolve("big.bin"), length, 5);
    java.util.Set<Thread> before = threads("gpudirect-server-checksum");
    java.util.Set<Thread> mine;
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
        RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      // Over 64 KiB: the CRC32C is computed on the server's pool beside the sendfile.
      peer.send(new ReadRequest(1, "big.bin", 0, length));
      assertInstanceOf(ReadData.class, peer.receive());
      assertArrayEquals(bytes, peer.payload(length));
      peer.checksumTrailer();
      mine = threads("gpudirect-server-checksum");
      mine.removeAll(before);
      assertFalse(mine.isEmpty(), "the server's pool computed the checksum");
    }
    for (Thread t : mine) {
      t.join(5_000);
      assertFalse(t.isAlive(), t + " still runs after its server closed");
    }
  }

  private static java.util.Set<Thread> threads(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().equals(name))
        .collect(java.util.stream.Collectors.toSet());
  }

  @Test
  void statusAnswersTheCountersAfterARead() throws IOException {
    byte[] bytes = TestFiles.write(dir.resolve("f.bin"), 5000, 3);
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
        RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      peer.send(new ReadRequest(1, "f.bin", 0, bytes.length));
      assertInstanceOf(ReadData.class, peer.receive());
      peer.payload(bytes.length);
      peer.checksumTrailer();
      peer.send(new StatusRequest(2));
      StatusResponse status = (StatusResponse) peer.receive();
      assertEquals(2, status.requestId());
      Map<String, Long> c = status.counters();
      assertEquals(bytes.length, c.get("bytesSent"));
      assertEquals(2, c.get("requests"), "the READ and this STATUS");
      assertEquals(1, c.get("connectionsActive"));
      assertEquals(0, c.get("readsInFlight"));
      assertEquals(s.stats().toMap().keySet(), c.keySet());
    }
  }

  @Test
  void statusNeedsAuthenticationLikeEveryRequest() throws IOException {
    byte[] secret = "s3cret-long-enough".getBytes(StandardCharsets.UTF_8);
    try (BlockServer s = BlockServer.builder().root(dir).port(0).secret(secret).build().start();
        RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      peer.send(new StatusRequest(5));
      Message m = peer.receive();
      ErrorResponse e = assertInstanceOf(ErrorResponse.class, m);
      assertEquals(ErrorCode.AUTH_FAILED, e.code());
      assertEquals(1, s.stats().authFailures());
    }
  }

  @Test
  void countersAreInJmxWhileTheServerRuns() throws Exception {
    TestFiles.write(dir.resolve("f.bin"), 1000, 3);
    BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("io.gpudirect:type=BlockServer,port=" + s.port());
    try (RawPeer peer = new RawPeer(s.port())) {
      assertEquals(name.toString(), s.jmxName());
      peer.handshake();
      peer.send(new ReadRequest(1, "f.bin", 0, 1000));
      peer.receive();
      peer.payload(1000);
      peer.checksumTrailer();
      peer.send(new StatusRequest(2));
      peer.receive();
      assertEquals(1000L, mbs.getAttribute(name, "BytesSent"));
      assertEquals(2L, mbs.getAttribute(name, "Requests"));
      assertEquals(1L, mbs.getAttribute(name, "ConnectionsActive"));
      assertEquals(1L, mbs.getAttribute(name, "ConnectionsAccepted"));
      assertEquals(0L, mbs.getAttribute(name, "Errors"));
      assertEquals("tcp", mbs.getAttribute(name, "Transports"));
      assertEquals(false, mbs.getAttribute(name, "AuthenticationRequired"));
      assertEquals(false, mbs.getAttribute(name, "Draining"));
      assertEquals(dir.toRealPath().toString(), mbs.getAttribute(name, "Root"));
    } finally {
      s.close();
    }
    assertThrows(InstanceNotFoundException.class, () -> mbs.getAttribute(name, "BytesSent"));
  }

  /**
   * A client's read is many pipelined READs. Once close() began, the connection keeps being
   * served while requests keep coming, new connections are refused, and an idle connection
   * is closed soon after.
   */
  @Test
  void drainingFinishesAReadOfSeveralRequestsAndRefusesNewConnections() throws Exception {
    int chunk = 8 << 20;
    byte[] bytes = TestFiles.write(dir.resolve("big.bin"), 2 * chunk, 11);
    BlockServer s = BlockServer.builder().root(dir).port(0).maxReadLength(chunk)
        .shutdownGracePeriod(Duration.ofSeconds(20)).build().start();
    int port = s.port();
    Thread closer = new Thread(s::close);
    try (RawPeer peer = new RawPeer(port)) {
      peer.handshake();
      peer.send(new ReadRequest(1, "big.bin", 0, chunk));
      assertEquals(1, ((ReadData) peer.receive()).requestId());
      // The server is blocked sending 8 MiB nobody reads yet.
      closer.start();
      assertTrue(Settle.until(s::isDraining), "close starts draining");
      // Longer than a connection may idle while draining: only the read in flight keeps it.
      Thread.sleep(2 * TimeUnit.NANOSECONDS.toMillis(BlockServer.DRAIN_IDLE_NANOS));
      assertTrue(closer.isAlive(), "close waits for the read in flight");
      assertThrows(ConnectException.class, () -> new RawPeer(port).close(), "no new connections while draining");
      byte[] first = peer.payload(chunk);
      peer.checksumTrailer();
      // The client's next chunk, sent as soon as the first arrived, is still served.
      peer.send(new ReadRequest(2, "big.bin", chunk, chunk));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      byte[] second = peer.payload(chunk);
      peer.checksumTrailer();
      assertArrayEquals(Arrays.copyOfRange(bytes, 0, chunk), first);
      assertArrayEquals(Arrays.copyOfRange(bytes, chunk, 2 * chunk), second);
      // Idle now: the server closes the connection and close() returns, long before the grace period.
      closer.join(10_000);
      assertFalse(closer.isAlive(), "close returns once the client is idle");
      assertThrows(IOException.class, peer::receive);
      assertEquals(2L * chunk, s.stats().bytesSent());
    } finally {
      s.close();
    }
  }

  @Test
  void theGracePeriodBoundsClose() throws Exception {
    byte[] bytes = TestFiles.write(dir.resolve("big.bin"), 16 << 20, 11);
    BlockServer s = BlockServer.builder().root(dir).port(0).maxReadLength(32 << 20)
        .shutdownGracePeriod(Duration.ofMillis(500)).build().start();
    try (RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      peer.send(new ReadRequest(1, "big.bin", 0, bytes.length));
      peer.receive();
      // This client never reads its payload.
      long t0 = System.nanoTime();
      s.close();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      // Not less than the grace period, and not until the client reads: it never will.
      assertTrue(ms >= 450 && ms < 10_000, "close took " + ms + " ms for a 500 ms grace period");
      assertEquals(0, s.stats().connectionsActive());
    }
  }
}
