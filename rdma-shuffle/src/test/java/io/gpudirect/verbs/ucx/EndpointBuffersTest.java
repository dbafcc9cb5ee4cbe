package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpudirect.memory.BufferAllocator;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * When a closed endpoint's memory is freed, without UCX (whose close over TCP releases the
 * endpoint at once; {@link UcxEndpointBuffersTest} runs it for real): the charges all go back at
 * the close, what UCX may still touch is freed only once it lets go.
 */
class EndpointBuffersTest {
  private static final int HEADS = UcxEndpoint.HEADER_BYTES + UcxEndpoint.WRITE_PREFIX;

  @Test
  void theHeadsAndKeyFrameAreFreedOnceUcxReleasesTheEndpointALentFrameOnceGivenBack() {
    try (BufferAllocator memory = BufferAllocator.newRoot("ucx", 1 << 20)) {
      EndpointBuffers buffers = new EndpointBuffers(memory, "client 10.0.0.2:40000", 4);
      buffers.keyFrame(UcxEndpoint.MAX_RKEY_FRAME);
      buffers.keyScratch(PackedRemoteKey.SCRATCH_BYTES);
      SendFrames.Frame sending = buffers.frames.take(100);
      buffers.frames.give(buffers.frames.take(100)); // idle in the pool at the close
      CompletableFuture<Void> released = new CompletableFuture<>();

      buffers.close(released);
      assertEquals(0, memory.outstandingBytes(), "a charge outlived the close: " + memory.outstanding());
      assertEquals(PackedRemoteKey.SCRATCH_BYTES + SendFrames.POOLED_BYTES, memory.freedBytes(),
          "freed at the close: the key scratch and the idle frame, nothing UCX may still touch");
      assertThrows(IllegalStateException.class, () -> buffers.keyScratch(PackedRemoteKey.SCRATCH_BYTES));

      released.complete(null);
      assertEquals(PackedRemoteKey.SCRATCH_BYTES + SendFrames.POOLED_BYTES + HEADS
          + UcxEndpoint.MAX_RKEY_FRAME, memory.freedBytes(), "the heads and key frame, once released");
      buffers.frames.give(sending); // its send completed after UCX released the endpoint
      assertEquals(PackedRemoteKey.SCRATCH_BYTES + 2 * SendFrames.POOLED_BYTES + HEADS
          + UcxEndpoint.MAX_RKEY_FRAME, memory.freedBytes(), "the lent frame, once given back");
    }
  }
}
