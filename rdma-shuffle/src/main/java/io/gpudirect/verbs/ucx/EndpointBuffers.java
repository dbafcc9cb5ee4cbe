package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * What one UCX endpoint holds in direct memory, charged to the verbs' allocator from its making
 * to its close and named after its peer: the header and WRITE prefix being received, the key
 * frame and the key scratch (made at the first key), and its send frames ({@link SendFrames}).
 *
 * <p>Closing gives every charge back. The memory is freed, not left to the collector, once
 * nothing can touch it: the key scratch at close (UCX reads it only inside the unpack call), the
 * heads and the key frame once UCX has released the endpoint (until then it may still complete a
 * canceled receive into them), a send frame once its send has completed ({@link SendFrames}).
 * The endpoint's own uses are on the loop thread, which closes this object: it checks that the
 * endpoint is open before each, and asking for a key buffer after the close fails.
 */
final class EndpointBuffers {
  private final BufferAllocator memory;
  private final String peerName;
  private final HostBuffer heads;
  /** The header of the frame being received, then a WRITE frame's prefix. Loop thread only. */
  final ByteBuffer header;
  final ByteBuffer writePrefix;
  final SendFrames frames;
  private HostBuffer keyFrameMemory;
  private ByteBuffer keyFrame;
  private HostBuffer keyScratchMemory;
  private ByteBuffer keyScratch;
  private boolean closed;

  EndpointBuffers(BufferAllocator memory, String peerName, int sendDepth) {
    this.memory = memory;
    this.peerName = peerName;
    this.heads = memory.allocateFreedAtClose(UcxEndpoint.HEADER_BYTES + UcxEndpoint.WRITE_PREFIX,
        "UCX frame header of " + peerName);
    this.header = heads.nioBuffer().slice(0, UcxEndpoint.HEADER_BYTES);
    this.writePrefix = heads.nioBuffer().slice(UcxEndpoint.HEADER_BYTES, UcxEndpoint.WRITE_PREFIX);
    this.frames = new SendFrames(memory, peerName, sendDepth);
  }

  /** Where key frames' bodies land, made at the first; loop thread only, while open. */
  ByteBuffer keyFrame(int bytes) {
    checkOpen("UCX key frame of ");
    if (keyFrame == null) {
      keyFrameMemory = made(bytes, "UCX key frame of ");
      keyFrame = keyFrameMemory.nioBuffer();
    }
    return keyFrame;
  }

  /** Where keys are unpacked from, made at the first; loop thread only, while open. */
  ByteBuffer keyScratch(int bytes) {
    checkOpen("UCX key scratch of ");
    if (keyScratch == null) {
      keyScratchMemory = made(bytes, "UCX key scratch of ");
      keyScratch = keyScratchMemory.nioBuffer();
    }
    return keyScratch;
  }

  private HostBuffer made(int bytes, String what) {
    return memory.allocateFreedAtClose(bytes, what + peerName);
  }

  /**
   * The endpoint checks that it is open before it asks (on the loop thread, which closes this):
   * after the close the memory may be freed, so a use then is a bug, and fails here.
   */
  private void checkOpen(String what) {
    if (closed) {
      throw new IllegalStateException(what + peerName + " asked for after the endpoint closed");
    }
  }

  /**
   * The endpoint is closed: every charge goes back, its frames' too; what UCX may still receive
   * into is held until {@code releasedByUcx} completes. On the loop thread.
   */
  void close(CompletableFuture<Void> releasedByUcx) {
    if (closed) {
      return;
    }
    closed = true;
    frames.close();
    heads.holdUntil(releasedByUcx);
    heads.close();
    if (keyFrameMemory != null) {
      keyFrameMemory.holdUntil(releasedByUcx);
      keyFrameMemory.close();
    }
    if (keyScratchMemory != null) {
      keyScratchMemory.close();
    }
  }
}
