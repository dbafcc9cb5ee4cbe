package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A UCX endpoint's buffers (its frame headers, its send frames, key buffers) are charged to the
 * verbs' allocator while it is open, named after its peer, and all given back when it closes:
 * on both sides, over real UCX. ({@link SendFramesTest}: frames are reused from one message to
 * the next.) Their memory is freed, not left to the collector, once UCX is done with it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxEndpointBuffersTest {
  @RegisterExtension static final UcxLoopback loopback = UcxLoopback.serving(1 << 20, 43);
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final QueueSizes SIZES = new QueueSizes(4, 4);

  @Test
  void anEndpointsBuffersAreChargedWhileOpenReusedPerMessageAndGoneOnceClosed() throws Exception {
    UcxVerbs verbs = UcxVerbs.open();
    BufferAllocator memory = verbs.memory();
    assertEquals(0, memory.outstandingBytes(), "no endpoint open before: " + memory.outstanding());
    try (UcxLoopback.Session s = loopback.connect(verbs, "gpudirect-client-ucx-buffers")) {
      String held = memory.outstanding();
      assertTrue(held.contains("UCX frame header of gpudirect server 127.0.0.1:")
          && held.contains("UCX frame header of client "), "both sides' endpoints: " + held);
      for (int id = 1; id <= 60; id++) {
        s.assertReads(id, id * 1000, 64 << 10);
      }
      // 60 reads sent some 180 frames (a SEND each way, WRITEs); what is held now is each
      // side's headers and the frames its pool keeps for the next messages.
      assertTrue(memory.outstandingBuffers() <= 2 * (1 + 4), "after 60 reads: " + memory.outstanding());
    }
    memory.assertNoLeaks();
  }

  /**
   * Two endpoints over real UCX, the client's with a key frame (the server announced a region):
   * once UCX has released them, every byte they held is freed, counted by the allocator, not
   * left to the collector; and at the client's close, all its charges go back but the heads and
   * the key frame UCX may still receive into are kept while UCX has not released it (over TCP
   * UCX 1.13 releases a force-closed endpoint inside the close; {@link EndpointBuffersTest}
   * holds them back without UCX).
   */
  @Test
  void aClosedEndpointsBuffersAreFreedOnceUcxHasReleasedIt() throws Exception {
    UcxVerbs verbs = UcxVerbs.open();
    BufferAllocator memory = verbs.memory();
    assertEquals(0, memory.outstandingBytes(), "no endpoint open before: " + memory.outstanding());
    CompletableFuture<UcxEndpoint> accepted = new CompletableFuture<>();
    Map<Long, CompletableFuture<WorkCompletion>> done = new ConcurrentHashMap<>();
    ByteBuffer serverBytes = ByteBuffer.allocateDirect(4096);
    ByteBuffer clientBytes = ByteBuffer.allocateDirect(4096);
    MemoryRegion serverRegion;
    MemoryRegion clientRegion;
    try (RdmaListener listener = verbs.listen(new InetSocketAddress("127.0.0.1", 0), SIZES, ep -> {
      accepted.complete((UcxEndpoint) ep);
      return recording(done);
    })) {
      UcxEndpoint client = (UcxEndpoint) verbs.connect(listener.address(), WAIT, SIZES, ep -> recording(done));
      UcxEndpoint server = accepted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      // An RKEY frame to the client, then a SEND behind it on the stream: once the SEND is in,
      // the client has received the RKEY into its key frame.
      serverRegion = server.register(serverBytes, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
      clientRegion = client.register(clientBytes, EnumSet.of(Access.LOCAL_WRITE));
      client.postRecv(1, clientRegion, 0, 64);
      server.postSend(2, serverRegion, 0, 64);
      for (long wrId : new long[] {1, 2}) {
        assertEquals(WorkCompletion.Status.SUCCESS, completion(done, wrId).status());
      }

      // On the loop, so that UCX progresses nothing between the counts and the close.
      long[] counts = client.loop().call(() -> {
        long charged = memory.outstandingBytes();
        long freed = memory.freedBytes();
        client.close();
        return new long[] {charged, freed, charged - memory.outstandingBytes(),
            memory.freedBytes() - freed, client.released().isDone() ? 1 : 0};
      }, WAIT);
      long chargedBefore = counts[0];
      long freedBefore = counts[1];
      long givenBackAtClose = counts[2];
      long freedAtClose = counts[3];
      boolean releasedInTheClose = counts[4] == 1;
      assertEquals(releasedInTheClose ? 0
          : UcxEndpoint.HEADER_BYTES + UcxEndpoint.WRITE_PREFIX + UcxEndpoint.MAX_RKEY_FRAME,
          givenBackAtClose - freedAtClose, "held past the close (UCX released the endpoint "
              + (releasedInTheClose ? "in it" : "later") + "): " + givenBackAtClose
              + " bytes' charge given back, " + freedAtClose + " freed");

      server.close();
      client.released().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      server.released().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertEquals(0, memory.outstandingBytes(), memory.outstanding());
      assertEquals(chargedBefore, memory.freedBytes() - freedBefore,
          "bytes freed once UCX released both endpoints, of the " + chargedBefore + " they held");
    }
    serverRegion.close();
    clientRegion.close();
    memory.assertNoLeaks();
  }

  private static CompletionHandler recording(Map<Long, CompletableFuture<WorkCompletion>> done) {
    return new CompletionHandler() {
      @Override
      public void onCompletion(WorkCompletion c) {
        done.computeIfAbsent(c.wrId(), id -> new CompletableFuture<>()).complete(c);
      }

      @Override
      public void onDisconnected(String reason) {
      }
    };
  }

  private static WorkCompletion completion(Map<Long, CompletableFuture<WorkCompletion>> done, long wrId)
      throws Exception {
    return done.computeIfAbsent(wrId, id -> new CompletableFuture<>()).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
