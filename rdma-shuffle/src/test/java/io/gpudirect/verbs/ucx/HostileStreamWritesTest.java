package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hostile server speaking real UCX to a client's endpoint, where neither host has an RDMA
 * device and the server's WRITEs come as frames on the stream that the client checks against
 * its own regions (a NIC's rkey check, done by the receiver; see {@link UcxEndpoint}). The
 * client's memory is a guard page, its region, and another guard page. Every WRITE that is not
 * wholly inside a region the client announced and still has is refused with an error naming
 * the server, lands nowhere (both guards and the region keep every byte), and closes the
 * connection; and the JVM lives on. One WRITE inside the region shows that the hostile frames
 * do arrive, so that the refusals are the check's.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileStreamWritesTest {
  private static final int PAGE = 4096;
  private static final byte UNTOUCHED = 0x11;
  private static final byte HOSTILE = (byte) 0xee;
  private static final Duration WAIT = Duration.ofSeconds(10);

  private HostileUcxServer server;
  private RdmaEndpoint client;
  /** Guard page, region, guard page. */
  private ByteBuffer memory;
  private long base;
  private MemoryRegion region;
  private final CompletableFuture<String> disconnected = new CompletableFuture<>();
  private final CompletableFuture<WorkCompletion> flushedReceive = new CompletableFuture<>();

  @BeforeAll
  static void needsStreamWrites() {
    RdmaOverUcxConformanceTest.needsUcx();
    assumeTrue(UcxLibrary.rdmaDevices().isEmpty(),
        "this host has an RDMA device: WRITEs are UCX puts here, bounded by the NIC");
  }

  @BeforeEach
  void connect() {
    server = new HostileUcxServer();
    client = UcxVerbs.open().connect(server.address(), WAIT, new QueueSizes(4, 4), ep -> new CompletionHandler() {
      @Override
      public void onCompletion(WorkCompletion c) {
        if (c.opcode() == WorkCompletion.Opcode.RECV) {
          flushedReceive.complete(c);
        }
      }

      @Override
      public void onDisconnected(String reason) {
        disconnected.complete(reason);
      }
    });
    memory = ByteBuffer.allocateDirect(3 * PAGE);
    fill(memory, 0, 3 * PAGE, UNTOUCHED);
    base = UcxTestAccess.address(memory);
    region = client.register(base + PAGE, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
  }

  @AfterEach
  void close() {
    region.close();
    client.close();
    server.close();
  }

  @Test
  void aWriteInsideItsRegionLandsThereAndNowhereElse() throws Exception {
    server.send(HostileUcxServer.writeFrame(region.rkey(), base + PAGE + 100,
        UcxEndpoint.WRITE_PREFIX + 64, hostileBytes(64)));
    awaitByte(PAGE + 163, HOSTILE);
    assertBytes(0, PAGE + 100, UNTOUCHED);
    assertBytes(PAGE + 100, PAGE + 164, HOSTILE);
    assertBytes(PAGE + 164, 3 * PAGE, UNTOUCHED);
    assertFalse(disconnected.isDone(), "the connection is still up");
  }

  @Test
  void aRegionKeyNeverAnnouncedIsRefused() throws Exception {
    int stranger = region.rkey() + 1000;
    refused(stranger, base + PAGE, 64, "with rkey " + stranger + ", which is not a region of this side's");
  }

  @Test
  void aWriteStartingBeforeTheRegionIsRefused() throws Exception {
    refused(region.rkey(), base + PAGE - 64, 128, "outside rkey " + region.rkey() + "'s region");
  }

  @Test
  void aWriteRunningPastTheRegionsEndIsRefused() throws Exception {
    refused(region.rkey(), base + 2 * PAGE - 64, 128, "outside rkey " + region.rkey() + "'s region");
  }

  @Test
  void aWriteWhollyAfterTheRegionIsRefused() throws Exception {
    refused(region.rkey(), base + 2 * PAGE, 64, "outside rkey " + region.rkey() + "'s region");
  }

  /** A frame length that would have the client receive 2 GiB into a 4 KiB region. */
  @Test
  void aLengthFarBeyondTheRegionIsRefusedBeforeAByteIsReceived() throws Exception {
    server.send(HostileUcxServer.writeFrame(region.rkey(), base + PAGE, Integer.MAX_VALUE, new byte[0]));
    assertRefused(Integer.MAX_VALUE - UcxEndpoint.WRITE_PREFIX, base + PAGE,
        "outside rkey " + region.rkey() + "'s region");
  }

  @Test
  void aRevokedRegionIsRefused() throws Exception {
    MemoryRegion guard = client.register(base, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    int revoked = guard.rkey();
    guard.close();
    refused(revoked, base, 64, "with rkey " + revoked + ", which is not a region of this side's");
  }

  /**
   * A WRITE whose bytes are still arriving when the client revokes the region (a server that
   * writes after the answer that ended the read): the rest must not land, since the memory
   * goes back to its owner once the region is closed.
   */
  @Test
  void aWriteStillArrivingWhenItsRegionIsRevokedLandsNoFurther() throws Exception {
    ByteBuffer frame = HostileUcxServer.writeFrame(region.rkey(), base + PAGE,
        UcxEndpoint.WRITE_PREFIX + PAGE, hostileBytes(PAGE / 2));
    server.send(frame);
    awaitByte(PAGE + PAGE / 2 - 1, HOSTILE);
    region.close();
    ByteBuffer rest = ByteBuffer.allocateDirect(PAGE / 2).put(hostileBytes(PAGE / 2)).flip();
    try {
      server.send(rest);
    } catch (Exception closed) {
      // the client may have closed the connection first
    }
    String why = disconnected.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(why.contains("gpudirect server " + UcxVerbs.describe(server.address()))
        && why.contains("was still writing into rkey " + region.rkey()), why);
    Thread.sleep(200);
    assertBytes(0, PAGE, UNTOUCHED);
    assertBytes(PAGE + PAGE / 2, 3 * PAGE, UNTOUCHED);
    assertClosed();
  }

  private void refused(int rkey, long address, int bytes, String why) throws Exception {
    server.send(HostileUcxServer.writeFrame(rkey, address, UcxEndpoint.WRITE_PREFIX + bytes, hostileBytes(bytes)));
    assertRefused(bytes, address, why);
  }

  private void assertRefused(int bytes, long address, String why) throws Exception {
    String reason = disconnected.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(reason.contains("gpudirect server " + UcxVerbs.describe(server.address())
        + " sent a WRITE of " + bytes + " bytes at 0x" + Long.toHexString(address))
        && reason.contains(why), reason);
    // Time for any byte that was going to land anyway.
    Thread.sleep(200);
    assertBytes(0, 3 * PAGE, UNTOUCHED);
    assertClosed();
  }

  /** The client's endpoint is closed: the server hears of it, and a new receive is flushed at once. */
  private void assertClosed() throws Exception {
    assertTrue(server.awaitClosedByClient(WAIT) != null);
    client.postRecv(7, region, 0, 64);
    WorkCompletion c = flushedReceive.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertEquals(WorkCompletion.Status.FLUSHED, c.status());
  }

  private void awaitByte(int at, byte value) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (memory.get(at) != value && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(value, memory.get(at), "byte " + at + " never arrived");
  }

  private void assertBytes(int from, int to, byte value) {
    for (int i = from; i < to; i++) {
      if (memory.get(i) != value) {
        throw new AssertionError(String.format("byte %d of guard, region, guard is %02x, not %02x"
            + " (region: bytes %d..%d)", i, memory.get(i), value, PAGE, 2 * PAGE));
      }
    }
  }

  private static void fill(ByteBuffer b, int from, int to, byte value) {
    for (int i = from; i < to; i++) {
      b.put(i, value);
    }
  }

  private static byte[] hostileBytes(int n) {
    byte[] b = new byte[n];
    Arrays.fill(b, HOSTILE);
    return b;
  }
}
