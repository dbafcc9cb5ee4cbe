package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.memory.HostBufferPool;
import java.nio.ByteBuffer;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The frames one endpoint puts on its UCX stream (a SEND's copy behind its header, the head of
 * a WRITE, an RKEY or a REVOKE), in direct buffers charged to the verbs' allocator: frames of
 * up to {@link #POOLED_BYTES} come from a pool of this endpoint's and go back to it, larger ones
 * (an RKEY with a long packed key, a SEND of a long path) are made for the one frame.
 *
 * <p>A frame goes back once UCX is done with its bytes: its send completed or failed, or it was
 * never handed to UCX. When the endpoint closes, every frame's charge goes back, lent or not.
 * The memory is freed, not left to the collector, but a lent frame's only once it is given back:
 * from its taking to then it is held ({@link HostBuffer.Hold}), since the thread that took it may
 * still be filling it and UCX may still be reading it for a send that has not completed. That
 * send's callback, not the endpoint's release, is what says UCX is done with the frame; one whose
 * callback never comes (a worker closed with the send outstanding) is left to the collector.
 * Thread-safe: frames are taken on callers' threads, given back on the loop's.
 */
final class SendFrames {
  /** A control message, a WRITE's head, a REVOKE, most RKEYs. */
  static final int POOLED_BYTES = 512;

  private final String what;
  private final HostBufferPool pool;
  /** Frames lent now, whose charge is this object's to give back: all of them at close. */
  private final Map<Frame, Boolean> lent = new IdentityHashMap<>();
  private boolean closed;

  /** A frame: its bytes from position 0 to its limit, ready to send. */
  final class Frame {
    private final HostBuffer memory;
    private final boolean pooled;
    /** Keeps the memory from the taking to the giving back, past this object's close. */
    private final HostBuffer.Hold lentOut;
    final ByteBuffer bytes;

    private Frame(HostBuffer memory, boolean pooled, int length) {
      this.memory = memory;
      this.pooled = pooled;
      this.lentOut = memory.hold();
      this.bytes = memory.nioBuffer().limit(length);
    }
  }

  /** {@code maxIdle}: most pooled frames kept between sends (the endpoint's send depth). */
  SendFrames(BufferAllocator allocator, String peerName, int maxIdle) {
    this.what = "UCX send frame to " + peerName;
    this.pool = HostBufferPool.freedAtClose(allocator, what, POOLED_BYTES, maxIdle);
  }

  /**
   * A frame of {@code length} bytes for the caller to fill (position 0, limit {@code length}),
   * which must be given back ({@link #give}) whether it was sent or not: its memory is kept until
   * then.
   */
  Frame take(int length) {
    boolean pooled = length <= POOLED_BYTES;
    HostBuffer memory = pooled ? pool.take() : pool.allocator().allocateFreedAtClose(length, what);
    Frame f = new Frame(memory, pooled, length);
    synchronized (this) {
      if (!closed) {
        lent.put(f, Boolean.TRUE);
        return f;
      }
    }
    // Closed meanwhile: the frame goes nowhere, and its charge back at once (its memory once given).
    release(f);
    return f;
  }

  /** UCX is done with {@code f}'s bytes, or never had them. A second give is ignored. */
  void give(Frame f) {
    boolean wasLent;
    synchronized (this) {
      wasLent = lent.remove(f) != null;
    }
    if (wasLent) {
      release(f);
    }
    f.lentOut.close();
  }

  private void release(Frame f) {
    if (f.pooled) {
      pool.give(f.memory);
    } else {
      f.memory.close();
    }
  }

  /**
   * Every frame's charge goes back, lent or idle: the endpoint is closed. The idle ones' memory
   * is freed now, a lent one's when it is given back.
   */
  void close() {
    Frame[] out;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      out = lent.keySet().toArray(new Frame[0]);
      lent.clear();
    }
    pool.close();
    for (Frame f : out) {
      release(f);
    }
  }
}
