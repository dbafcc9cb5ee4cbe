package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.BufferAllocator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A UCX endpoint's buffers (its frame headers, its send frames, key buffers) are charged to the
 * verbs' allocator while it is open, named after its peer, and all given back when it closes:
 * on both sides, over real UCX. ({@link SendFramesTest}: frames are reused from one message to
 * the next.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxEndpointBuffersTest {
  @RegisterExtension static final UcxLoopback loopback = UcxLoopback.serving(1 << 20, 43);

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
}
