package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.nio.ByteBuffer;

/**
 * What one UCX endpoint holds in direct memory, charged to the verbs' allocator from its making
 * to its close and named after its peer: the header and WRITE prefix being received, the key
 * frame and the key scratch (made at the first key), and its send frames ({@link SendFrames}).
 * Closing gives every charge back; the memory itself stays valid while anything refers to it,
 * so a receive or send that UCX cancels late touches nothing freed.
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
    this.heads = memory.allocate(UcxEndpoint.HEADER_BYTES + UcxEndpoint.WRITE_PREFIX,
        "UCX frame header of " + peerName);
    this.header = heads.nioBuffer().slice(0, UcxEndpoint.HEADER_BYTES);
    this.writePrefix = heads.nioBuffer().slice(UcxEndpoint.HEADER_BYTES, UcxEndpoint.WRITE_PREFIX);
    this.frames = new SendFrames(memory, peerName, sendDepth);
  }

  /** Where key frames' bodies land, made at the first; loop thread only. */
  ByteBuffer keyFrame(int bytes) {
    if (keyFrame == null) {
      keyFrameMemory = made(bytes, "UCX key frame of ");
      keyFrame = keyFrameMemory.nioBuffer();
    }
    return keyFrame;
  }

  /** Where keys are unpacked from, made at the first; loop thread only. */
  ByteBuffer keyScratch(int bytes) {
    if (keyScratch == null) {
      keyScratchMemory = made(bytes, "UCX key scratch of ");
      keyScratch = keyScratchMemory.nioBuffer();
    }
    return keyScratch;
  }

  private HostBuffer made(int bytes, String what) {
    HostBuffer b = memory.allocate(bytes, what + peerName);
    if (closed) {
      b.close(); // asked for by a frame the closed endpoint still read: nothing is kept for it
    }
    return b;
  }

  /** The endpoint is closed: every charge goes back, its frames' too. On the loop thread. */
  void close() {
    if (closed) {
      return;
    }
    closed = true;
    frames.close();
    heads.close();
    if (keyFrameMemory != null) {
      keyFrameMemory.close();
    }
    if (keyScratchMemory != null) {
      keyScratchMemory.close();
    }
  }
}
