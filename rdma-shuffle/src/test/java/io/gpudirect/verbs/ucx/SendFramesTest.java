package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.MemoryLeakException;
import org.junit.jupiter.api.Test;

/**
 * An endpoint's send frames: pooled per message, charged while held, all given back at close,
 * each one's memory freed once it is given back, or at the close if it is idle then.
 */
class SendFramesTest {
  @Test
  void aFrameGivenBackIsTheNextOneTakenAndALargeOneIsMadeForItsFrameAlone() {
    try (BufferAllocator memory = BufferAllocator.newRoot("ucx", 1 << 20)) {
      SendFrames frames = new SendFrames(memory, "gpudirect server 10.0.0.1:7337", 4);
      SendFrames.Frame first = frames.take(8 + 40);
      assertEquals(48, first.bytes.limit());
      first.bytes.putInt(0, 0xCAFE);
      frames.give(first);
      SendFrames.Frame second = frames.take(8 + 12);
      // New direct memory is zeroed: the mark says it is the same memory, not a new allocation.
      assertEquals(0xCAFE, second.bytes.getInt(0));
      assertEquals(SendFrames.POOLED_BYTES, memory.outstandingBytes());

      SendFrames.Frame large = frames.take(SendFrames.POOLED_BYTES + 1);
      assertEquals(2L * SendFrames.POOLED_BYTES + 1, memory.outstandingBytes());
      frames.give(large);
      assertEquals(SendFrames.POOLED_BYTES, memory.outstandingBytes(), "a large frame is not kept");
      frames.give(second);
      frames.give(second); // UCX's callback and the endpoint's flush may both give it back
      frames.close();
      memory.assertNoLeaks();
    }
  }

  @Test
  void closingGivesBackFramesStillLentAndALeakNamesThePeer() {
    try (BufferAllocator memory = BufferAllocator.newRoot("ucx", 1 << 20)) {
      SendFrames frames = new SendFrames(memory, "client 10.0.0.2:40000", 4);
      SendFrames.Frame inFlight = frames.take(100);
      MemoryLeakException leak = assertThrows(MemoryLeakException.class, memory::assertNoLeaks);
      assertTrue(leak.getMessage().contains("UCX send frame to client 10.0.0.2:40000"), leak.getMessage());
      frames.close();
      memory.assertNoLeaks();
      assertEquals(0, memory.freedBytes(), "a frame UCX may still be sending was freed at the close");
      frames.give(inFlight); // UCX's callback after the close: its charge went back, now its memory
      assertEquals(SendFrames.POOLED_BYTES, memory.freedBytes());
      // A SEND posted as the endpoint closes: never sent, no charge kept, but the poster fills it.
      SendFrames.Frame late = frames.take(20);
      memory.assertNoLeaks();
      late.bytes.putInt(0, 7);
      assertEquals(SendFrames.POOLED_BYTES, memory.freedBytes(), "freed before the poster was done");
      frames.give(late);
      assertEquals(2 * SendFrames.POOLED_BYTES, memory.freedBytes());
    }
  }
}
