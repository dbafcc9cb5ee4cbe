package io.gpudirect.verbs;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ProtocolException;
import java.nio.ByteBuffer;
import java.util.EnumSet;

/**
 * The registered memory for one endpoint's control messages: {@code recvSlots} receive slots
 * followed by {@code sendSlots} send slots of {@code slotBytes} each, one registration. A
 * message occupies one slot as a whole frame (length prefix, type, body), so the codec is the
 * TCP one. This object owns the registration, and the buffer when it allocated it.
 *
 * <p>A buffer it allocated is freed, not left to the collector (a client that connects often
 * would otherwise make half a MiB of garbage per connection, as the server did: docs/security.md),
 * but not before the provider has {@linkplain RdmaEndpoint#released() released} the endpoint, which
 * may still complete a canceled receive into a slot after {@link #close}; the charge returns at
 * close. Each encode and decode holds the memory while it runs, so one racing with a close fails
 * instead of touching freed memory.
 */
public final class ControlSlots implements AutoCloseable {
  private final HostBuffer buffer;
  /** Whether this object allocated {@link #buffer} and frees it; otherwise the caller does. */
  private final boolean owned;
  private final ByteBuffer memory;
  private final MemoryRegion region;
  private final int recvSlots;
  private final int sendSlots;
  private final int slotBytes;
  private final boolean[] sendFree;
  private int freeSends;

  /** Slots in a buffer allocated from {@code allocator}, freed by {@link #close}. */
  public ControlSlots(RdmaEndpoint endpoint, BufferAllocator allocator, int recvSlots, int sendSlots,
      int slotBytes) {
    this(endpoint, allocator.allocateFreedAtClose(Math.multiplyExact(recvSlots + sendSlots, slotBytes),
        "control slots of an RDMA connection"), true, recvSlots, sendSlots, slotBytes);
  }

  /**
   * Slots in {@code memory}, which the caller owns and frees after {@link #close}; it must hold
   * {@code (recvSlots + sendSlots) * slotBytes} bytes.
   */
  public ControlSlots(RdmaEndpoint endpoint, HostBuffer memory, int recvSlots, int sendSlots,
      int slotBytes) {
    this(endpoint, memory, false, recvSlots, sendSlots, slotBytes);
  }

  private ControlSlots(RdmaEndpoint endpoint, HostBuffer buffer, boolean owned, int recvSlots,
      int sendSlots, int slotBytes) {
    this.recvSlots = recvSlots;
    this.sendSlots = sendSlots;
    this.slotBytes = slotBytes;
    this.owned = owned;
    this.buffer = buffer;
    this.memory = buffer.nioBuffer();
    try {
      if (memory.capacity() < (long) (recvSlots + sendSlots) * slotBytes) {
        throw new IllegalArgumentException(memory.capacity() + " bytes cannot hold " + recvSlots
            + " + " + sendSlots + " control slots of " + slotBytes);
      }
      this.region = endpoint.register(memory, EnumSet.of(Access.LOCAL_WRITE));
      if (owned) {
        buffer.holdUntil(endpoint.released());
      }
    } catch (RuntimeException e) {
      if (owned) {
        buffer.close();
      }
      throw e;
    }
    this.sendFree = new boolean[sendSlots];
    java.util.Arrays.fill(sendFree, true);
    this.freeSends = sendSlots;
  }

  public int slotBytes() {
    return slotBytes;
  }

  public void postRecv(RdmaEndpoint endpoint, int slot, long wrId) {
    endpoint.postRecv(wrId, region, (long) slot * slotBytes, slotBytes);
  }

  /** Decodes the message a receive put in {@code slot}; {@code byteLength} from its completion. */
  public Message received(int slot, int byteLength) {
    if (slot < 0 || slot >= recvSlots) {
      throw new ProtocolException("receive completion for unknown slot " + slot);
    }
    if (byteLength < Frames.HEADER_BYTES || byteLength > slotBytes) {
      throw new ProtocolException("control message of " + byteLength + " bytes (slot holds "
          + slotBytes + ")");
    }
    try (HostBuffer.Hold h = holdMemory()) {
      ByteBuffer frame = memory.duplicate().position(slot * slotBytes).limit(slot * slotBytes + byteLength).slice();
      int length = Frames.checkLength(frame.getInt());
      if (length != byteLength - 4) {
        throw new ProtocolException("control message frame says " + length + " bytes, the receive got "
            + (byteLength - 4));
      }
      return Frames.decode(frame);
    }
  }

  /** A free send slot, or -1 when all are in flight. */
  public synchronized int takeSendSlot() {
    for (int i = 0; i < sendSlots && freeSends > 0; i++) {
      if (sendFree[i]) {
        sendFree[i] = false;
        freeSends--;
        return i;
      }
    }
    return -1;
  }

  public synchronized void releaseSendSlot(int slot) {
    if (slot >= 0 && slot < sendSlots && !sendFree[slot]) {
      sendFree[slot] = true;
      freeSends++;
      notifyAll();
    }
  }

  /** Waits up to {@code millis} for a send slot; -1 when none freed in time. */
  public synchronized int awaitSendSlot(long millis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    int slot;
    while ((slot = takeSendSlot()) < 0) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return -1;
      }
      wait(left);
    }
    return slot;
  }

  /** Encodes {@code m} into send slot {@code slot} and posts the SEND. */
  public void postSend(RdmaEndpoint endpoint, int slot, long wrId, Message m) {
    ByteBuffer frame = Frames.encode(m);
    if (frame.remaining() > slotBytes) {
      throw new IllegalArgumentException(m.type() + " of " + frame.remaining()
          + " bytes does not fit a control slot of " + slotBytes);
    }
    int at = (recvSlots + slot) * slotBytes;
    int n = frame.remaining();
    try (HostBuffer.Hold h = holdMemory()) {
      memory.duplicate().position(at).put(frame);
      endpoint.postSend(wrId, region, at, n);
    }
  }

  private HostBuffer.Hold holdMemory() {
    HostBuffer.Hold h = buffer.tryHold();
    if (h == null) {
      throw new IllegalStateException("control slots of " + buffer.capacity() + " bytes are closed");
    }
    return h;
  }

  @Override
  public void close() {
    region.close();
    if (owned) {
      buffer.close();
    }
  }
}
