package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.WorkCompletion;
import io.gpudirect.verbs.WorkCompletion.Opcode;
import io.gpudirect.verbs.WorkCompletion.Status;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * The verbs seam's queue pair, on one UCX endpoint. What RC gives for free is built here:
 * <ul>
 *   <li><b>SEND/RECV</b>: UCX's per-endpoint stream, ordered like a queue pair. Each message is a
 *       frame ({@link #HEADER_BYTES}: kind, length) so that one SEND fills one posted receive.</li>
 *   <li><b>rkeys</b>: a UCX rkey is a packed blob of variable length, not a 32-bit key, so a
 *       remotely writable region is announced to the peer in an RKEY frame (its number, address,
 *       length and packed key) before any SEND that can name it: the stream keeps that order.
 *       The seam's {@code int rkey} is that number. Closing the region sends REVOKE.</li>
 *   <li><b>WRITE then SEND</b>: RC delivers a SEND after the WRITEs posted before it; UCX does
 *       not order a put and a stream send. A SEND posted after puts waits for an endpoint flush
 *       (which completes when the puts have landed remotely) before it goes out.</li>
 *   <li><b>Access checks</b>: over TCP or shared memory UCX writes where a put says, unchecked (a
 *       NIC would check the rkey's bounds), so every put is checked against the announced region
 *       here, and a bad one fails as {@link Status#REMOTE_ACCESS_ERROR} without being issued.</li>
 *   <li><b>WRITEs without a NIC</b>: where either side has no RDMA device (each says so in its
 *       RKEY frames), a WRITE goes on the stream as a WRITE frame (rkey number, address, then the
 *       bytes), and the receiver checks it against its own regions and receives it in place. UCX
 *       would otherwise emulate the put in software, and its receiver acknowledges each emulated
 *       put from inside its AM handler: if that acknowledgement fails because the putter just
 *       died, UCX aborts the receiving process ({@code ucp_put_handler} → {@code
 *       ucp_progress_rma_cmpl} returns the send error → {@code ucp_request_try_send}: {@code
 *       ucs_fatal("unexpected error")}; src/ucp/rma/rma_sw.c, the same from 1.13 to master). A
 *       client that a dying server can kill is not acceptable; a stream receive only fails.</li>
 *   <li><b>Errors</b>: as with RC, the first failed work request breaks the endpoint: it is closed
 *       (the peer's error handler fires), and everything outstanding completes as flushed.</li>
 *   <li><b>Unproven peers</b>: an endpoint a listener accepted takes nothing but SENDs into the
 *       receives posted for it until its owner {@link #admit}s the peer (a server, once the peer
 *       presented its RDMA_BIND token): an RKEY, REVOKE or WRITE frame before that breaks it,
 *       so a stranger gets no key unpacked, no memory and no work. A key announced later is
 *       checked against UCX's layout ({@link PackedRemoteKey}) and unpacked only when a put
 *       needs it; at most {@link #MAX_REMOTE_KEYS} are kept.</li>
 * </ul>
 * Every UCX call runs on the {@link WorkerLoop}'s thread; completions are delivered there.
 */
final class UcxEndpoint implements RdmaEndpoint {
  static final int HEADER_BYTES = 8;
  private static final int SEND = 1;
  private static final int RKEY = 2;
  private static final int REVOKE = 3;
  static final int WRITE = 4;
  /** A WRITE frame's body before its bytes: rkey number, remote address. */
  static final int WRITE_PREFIX = 12;
  /** RKEY frames: id, address, length, flags, then the packed key. */
  private static final int RKEY_PREFIX = 24;
  /** RKEY flag: the announcer can take a put from a NIC (it has an RDMA device UCX may use). */
  private static final int NATIVE_PUTS = 1;
  static final int MAX_RKEY_FRAME = RKEY_PREFIX + PackedRemoteKey.MAX_BYTES;
  /**
   * Remotely writable regions a peer may have announced at once: a client keeps one per read
   * in flight and its registered device buffers, far fewer.
   */
  static final int MAX_REMOTE_KEYS = 1024;
  /** No control message comes near this; a larger frame is a broken peer. */
  private static final int MAX_SEND_FRAME = 16 << 20;
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  private enum State { CONNECTING, OPEN, CLOSED }

  /** A posted receive. */
  private record Recv(long wrId, long address, int length) {}

  /** A posted SEND or WRITE, or an internal frame (wrId -1): completes once. */
  private static final class Op {
    final long wrId;
    final Opcode opcode;
    final SendFrames.Frame frame;
    /** Its frame was handed to UCX: it goes back to the pool from the send's callback. */
    boolean handedOver;
    /** A WRITE frame's bytes, sent from where they are behind the frame. */
    long payload;
    int payloadLength;
    RemoteRegion remote;
    long putsBefore;
    boolean done;

    Op(long wrId, Opcode opcode, SendFrames.Frame frame) {
      this.wrId = wrId;
      this.opcode = opcode;
      this.frame = frame;
    }
  }

  private final WorkerLoop loop;
  private final UcpContext context;
  private final String peerName;
  private final QueueSizes sizes;
  private final WritePaths writes;
  private final AtomicInteger sendsPosted = new AtomicInteger();
  private final AtomicInteger nextRkey = new AtomicInteger();
  private volatile InetSocketAddress peer;
  private UcpEndpoint endpoint;
  private CompletionHandler handler;
  private volatile State state = State.CONNECTING;
  /** Why it broke, once closed. */
  private volatile String closedBecause;
  /** Whether the peer may send more than SENDs (see the class comment). */
  private volatile boolean admitted;
  private Consumer<String> connectFailed;
  /** Whether its buffers and loop reference have been given back (once). */
  private boolean givenBack;
  /** Completed once UCX has finished closing the endpoint ({@link #released()}). */
  private final java.util.concurrent.CompletableFuture<Void> closedByUcx = new java.util.concurrent.CompletableFuture<>();
  /** Its direct memory, charged until it closes, freed once UCX is done with it. */
  private final EndpointBuffers buffers;
  private final SendFrames frames;

  // Loop-thread state.
  private final ByteBuffer header;
  private final ByteBuffer writePrefix;
  private final ArrayDeque<Recv> recvs = new ArrayDeque<>();
  /** The continuation of the receive that completed, and whether one is running (see {@link #received}). */
  private Runnable nextReceived;
  private boolean runningReceived;
  /** This side's remotely writable regions by rkey number: what a WRITE frame may land in. */
  private final Map<Integer, UcxRegion> writable = new ConcurrentHashMap<>();
  /** The region a WRITE frame's bytes are being received into now, if any. */
  private UcxRegion receivingInto;
  private final Set<Op> outstanding = new LinkedHashSet<>();
  private final Map<Integer, RemoteRegion> remote = new HashMap<>();
  private final ArrayDeque<Op> waitingForFlush = new ArrayDeque<>();
  private long putsIssued;
  private long putsFlushed;
  private boolean flushing;

  /**
   * @param writes whether a put to or from this side can be carried by a NIC (UCX may use verbs
   *     here; where it cannot, WRITEs travel as stream frames, see the class comment), and the
   *     counts of each
   * @param admitted whether the peer is trusted with more than SENDs from the start (this side
   *     connected to it), or must wait for {@link #admit} (a listener accepted it)
   * @param memory where its buffers are charged until it closes
   */
  UcxEndpoint(WorkerLoop loop, UcpContext context, InetSocketAddress peer, String peerName,
      QueueSizes sizes, WritePaths writes, boolean admitted, BufferAllocator memory) {
    this.admitted = admitted;
    this.loop = loop;
    this.writes = writes;
    this.context = context;
    this.peer = peer;
    this.peerName = peerName;
    this.sizes = sizes;
    this.buffers = new EndpointBuffers(memory, peerName, sizes.sendDepth());
    this.header = buffers.header;
    this.writePrefix = buffers.writePrefix;
    this.frames = buffers.frames;
  }

  /** Binds the UCX endpoint, once made (on the loop thread). */
  void bind(UcpEndpoint ep) {
    this.endpoint = ep;
  }

  String peerName() {
    return peerName;
  }

  WorkerLoop loop() {
    return loop;
  }

  /** Before {@link #start}: where an error of a connection not yet up is reported instead. */
  void onConnectFailure(Consumer<String> failed) {
    this.connectFailed = failed;
  }

  /** Starts reading frames; from now on completions go to {@code h}. */
  void start(CompletionHandler h) {
    onLoop(() -> {
      handler = h;
      if (state == State.CONNECTING) {
        state = State.OPEN;
        readHeader();
      }
    });
  }

  /** Waits until UCX has wired the endpoint up (an endpoint flush completes then). */
  void awaitConnected(Duration timeout) {
    java.util.concurrent.CompletableFuture<Void> up = new java.util.concurrent.CompletableFuture<>();
    loop.execute(() -> {
      if (state == State.CLOSED) {
        // UCX freed the endpoint when it was closed: it must not be touched again.
        up.completeExceptionally(new IllegalStateException("the connection closed: " + closedBecause));
        return;
      }
      try {
        endpoint.flushNonBlocking(callback(r -> up.complete(null),
            (status, message) -> up.completeExceptionally(new IllegalStateException(message))));
      } catch (RuntimeException e) {
        up.completeExceptionally(e);
      }
    });
    try {
      up.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new RdmaException(RdmaException.Phase.CONNECT, peerName, "UCX could not connect: "
          + e.getCause().getMessage(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new RdmaException(RdmaException.Phase.CONNECT, peerName, "UCX did not connect within "
          + timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RdmaException(RdmaException.Phase.CONNECT, peerName, "interrupted", e);
    }
  }

  @Override
  public InetSocketAddress peer() {
    return peer;
  }

  /**
   * From now on the peer may announce keys and send WRITE frames. Called by the owner of the
   * completions, on the loop thread inside the completion of the receive that proved the peer,
   * so the next frame is already judged by it.
   */
  @Override
  public void admit() {
    admitted = true;
  }

  @Override
  public MemoryRegion register(long address, long length, Set<Access> access) {
    MemoryRegion.checkLength(length, peerName);
    if (!access.contains(Access.REMOTE_WRITE) && !access.contains(Access.REMOTE_READ)) {
      return new UcxRegion(this, address, length, null, 0);
    }
    UcpMemory memory;
    try {
      memory = context.memoryMap(new UcpMemMapParams().setAddress(address).setLength(length));
    } catch (RuntimeException e) {
      throw new RdmaException(RdmaException.Phase.REGISTER, peerName, "ucp_mem_map of " + length
          + " bytes at 0x" + Long.toHexString(address) + " failed: " + e.getMessage(), e);
    }
    int id = nextRkey.incrementAndGet();
    ByteBuffer packed = memory.getRemoteKeyBuffer();
    SendFrames.Frame frame = frames.take(HEADER_BYTES + RKEY_PREFIX + packed.remaining());
    frame.bytes.putInt(RKEY).putInt(RKEY_PREFIX + packed.remaining()).putInt(id).putLong(address)
        .putLong(length).putInt(writes.nativePuts ? NATIVE_PUTS : 0).put(packed).flip();
    UcxRegion region = new UcxRegion(this, address, length, memory, id);
    writable.put(id, region);
    // On the stream before this returns: a SEND naming the key may be posted next from any
    // thread, the loop's own included, and must not overtake the RKEY frame.
    loop.call(() -> {
      sendFrame(new Op(-1, Opcode.SEND, frame));
      return null;
    }, CALL_TIMEOUT);
    return region;
  }

  @Override
  public MemoryRegion register(ByteBuffer direct, Set<Access> access) {
    if (!direct.isDirect()) {
      throw new IllegalArgumentException("only direct buffers can be registered");
    }
    return register(UcxUtils.getAddress(direct), direct.capacity(), access);
  }

  /**
   * Tells the peer {@code region} is gone, then unmaps it (UCX's put path never reads the map
   * again). Returns once no WRITE frame's bytes can land in it any more, as a NIC's
   * deregistration does: a receive already under way into the region is not stopped by the
   * unmap, so it is waited for on the loop. A correct peer never writes into a region after the
   * answer that ended its read, so a WRITE still arriving then is a broken or hostile peer,
   * and breaking the endpoint ends its receive before the memory goes back to its owner.
   */
  void revoke(UcxRegion region, UcpMemory memory) {
    writable.remove(region.rkey());
    SendFrames.Frame frame = frames.take(HEADER_BYTES + 4);
    frame.bytes.putInt(REVOKE).putInt(4).putInt(region.rkey()).flip();
    try {
      loop.call(() -> {
        if (receivingInto == region) {
          frames.give(frame);
          breakEndpoint(peerName + " was still writing into rkey " + region.rkey()
              + "'s region when it was revoked", true);
        } else {
          sendFrame(new Op(-1, Opcode.SEND, frame));
        }
        return null;
      }, CALL_TIMEOUT);
    } catch (IllegalStateException stopped) {
      // The loop stops only once this endpoint is closed: nothing is received any more.
    }
    memory.deregister();
  }

  @Override
  public void postRecv(long wrId, MemoryRegion region, long offset, int length) {
    long address = region.address() + offset;
    if (offset < 0 || !region.covers(address, length)) {
      throw new RdmaException(RdmaException.Phase.POST, peerName, "receive of " + length
          + " bytes at offset " + offset + " is outside its region", null);
    }
    onLoop(() -> {
      if (state == State.CLOSED) {
        complete(wrId, Opcode.RECV, Status.FLUSHED, 0, "endpoint closed");
      } else {
        recvs.add(new Recv(wrId, address, length));
      }
    });
  }

  @Override
  public void postSend(long wrId, MemoryRegion region, long offset, int length) {
    long address = region.address() + offset;
    if (offset < 0 || !region.covers(address, length)) {
      throw new RdmaException(RdmaException.Phase.POST, peerName, "SEND of " + length
          + " bytes at offset " + offset + " is outside its region", null);
    }
    countSend();
    // The payload is copied behind its frame header: the caller may reuse its slot once the
    // SEND completes, and one UCX send per message keeps frames whole on the stream.
    SendFrames.Frame frame = frames.take(HEADER_BYTES + length);
    frame.bytes.putInt(SEND).putInt(length).put(UcxUtils.getByteBufferView(address, length)).flip();
    onLoop(() -> sendFrame(new Op(wrId, Opcode.SEND, frame)));
  }

  @Override
  public void postWrite(long wrId, MemoryRegion region, long offset, int length, long remoteAddress,
      int rkey) {
    long address = region.address() + offset;
    if (offset < 0 || !region.covers(address, length)) {
      throw new RdmaException(RdmaException.Phase.POST, peerName, "WRITE of " + length
          + " bytes at offset " + offset + " is outside its local region", null);
    }
    countSend();
    onLoop(() -> put(new Op(wrId, Opcode.RDMA_WRITE, null), address, length, remoteAddress, rkey));
  }

  private void countSend() {
    if (sendsPosted.incrementAndGet() > sizes.sendDepth()) {
      sendsPosted.decrementAndGet();
      throw new RdmaException(RdmaException.Phase.POST, peerName, "send queue full ("
          + sizes.sendDepth() + " SENDs and WRITEs outstanding)", null);
    }
  }

  private void put(Op op, long address, int length, long remoteAddress, int rkey) {
    if (state == State.CLOSED) {
      finish(op, Status.FLUSHED, 0, "endpoint closed");
      return;
    }
    RemoteRegion r = remote.get(rkey);
    if (r == null || !r.covers(remoteAddress, length)) {
      String why = r == null ? "rkey " + rkey + " was never announced by the peer, or was revoked"
          : length + " bytes at 0x" + Long.toHexString(remoteAddress) + " are outside rkey " + rkey
              + "'s region (" + r.length + " bytes at 0x" + Long.toHexString(r.address) + ")";
      outstanding.add(op);
      finish(op, Status.REMOTE_ACCESS_ERROR, 0, why);
      breakEndpoint("a WRITE was refused: " + why, false);
      return;
    }
    if (!writes.nativePuts || !r.nativePuts) {
      writes.streamWrites.increment();
      SendFrames.Frame frame = frames.take(HEADER_BYTES + WRITE_PREFIX);
      frame.bytes.putInt(WRITE).putInt(WRITE_PREFIX + length).putInt(rkey).putLong(remoteAddress).flip();
      Op write = new Op(op.wrId, op.opcode, frame);
      write.payload = address;
      write.payloadLength = length;
      sendFrame(write);
      return;
    }
    UcpRemoteKey key;
    try {
      // Keys are unpacked from a buffer of the endpoint's own, made at the first.
      key = r.key(endpoint, buffers.keyScratch(PackedRemoteKey.SCRATCH_BYTES));
    } catch (RuntimeException e) {
      String why = "UCX cannot unpack rkey " + rkey + " that " + peerName + " announced: "
          + e.getMessage();
      outstanding.add(op);
      finish(op, Status.REMOTE_ACCESS_ERROR, 0, why);
      breakEndpoint(why, false);
      return;
    }
    writes.puts.increment();
    outstanding.add(op);
    op.remote = r;
    r.putStarted();
    putsIssued++;
    try {
      endpoint.putNonBlocking(address, length, remoteAddress, key, callback(
          req -> {
            r.putEnded();
            finish(op, Status.SUCCESS, length, null);
          },
          (status, message) -> {
            r.putEnded();
            failed(op, status, message);
          }));
    } catch (RuntimeException e) {
      r.putEnded();
      failed(op, UcsConstants.STATUS.UCS_ERR_IO_ERROR, e.getMessage());
    }
  }

  /** Sends a frame, after a flush when puts were issued since the last one (RC's WRITE-before-SEND). */
  private void sendFrame(Op op) {
    if (state == State.CLOSED) {
      finish(op, Status.FLUSHED, 0, "endpoint closed");
      return;
    }
    outstanding.add(op);
    op.putsBefore = putsIssued;
    if (waitingForFlush.isEmpty() && op.putsBefore <= putsFlushed) {
      transmit(op);
    } else {
      waitingForFlush.add(op);
      flushIfNeeded();
    }
  }

  private void flushIfNeeded() {
    if (flushing || waitingForFlush.isEmpty() || state == State.CLOSED) {
      return;
    }
    long covered = putsIssued;
    flushing = true;
    endpoint.flushNonBlocking(callback(req -> {
      flushing = false;
      putsFlushed = Math.max(putsFlushed, covered);
      while (!waitingForFlush.isEmpty() && waitingForFlush.peek().putsBefore <= putsFlushed) {
        transmit(waitingForFlush.poll());
      }
      flushIfNeeded();
    }, (status, message) -> {
      flushing = false;
      breakEndpoint("flushing puts before a SEND failed: " + message, true);
    }));
  }

  private void transmit(Op op) {
    if (state == State.CLOSED) {
      finish(op, Status.FLUSHED, 0, "endpoint closed");
      return;
    }
    try {
      ByteBuffer frame = op.frame.bytes;
      op.handedOver = true;
      if (op.opcode == Opcode.RDMA_WRITE) {
        // The frame, then its bytes from where they are, back to back on this thread: the
        // stream keeps them together and in order. The WRITE is done when its bytes are sent.
        boolean empty = op.payloadLength == 0;
        endpoint.sendStreamNonBlocking(UcxUtils.getAddress(frame), frame.remaining(),
            callback(req -> {
              frames.give(op.frame);
              if (empty) {
                finish(op, Status.SUCCESS, 0, null);
              }
            }, (status, message) -> {
              frames.give(op.frame);
              failed(op, status, message);
            }));
        // A failure of the frame's send, reported inline, has closed (freed) the endpoint.
        if (!empty && state != State.CLOSED) {
          endpoint.sendStreamNonBlocking(op.payload, op.payloadLength, callback(
              req -> finish(op, Status.SUCCESS, op.payloadLength, null),
              (status, message) -> failed(op, status, message)));
        }
        return;
      }
      int sent = frame.remaining() - HEADER_BYTES;
      endpoint.sendStreamNonBlocking(UcxUtils.getAddress(frame), frame.remaining(), callback(
          req -> {
            frames.give(op.frame);
            finish(op, Status.SUCCESS, sent, null);
          },
          (status, message) -> {
            frames.give(op.frame);
            failed(op, status, message);
          }));
    } catch (RuntimeException e) {
      failed(op, UcsConstants.STATUS.UCS_ERR_IO_ERROR, e.getMessage());
    }
  }

  private void readHeader() {
    if (state != State.OPEN) {
      return;
    }
    header.clear();
    readBody(UcxUtils.getAddress(header), HEADER_BYTES, this::onHeader);
  }

  private void onHeader() {
    if (state == State.CLOSED) {
      // A receive UCX finished as the endpoint closed: nothing more is read, and the buffers it
      // went into are freed once UCX releases the endpoint (EndpointBuffers).
      return;
    }
    int kind = header.getInt(0);
    int length = header.getInt(4);
    if (!admitted && kind != SEND) {
      breakEndpoint(peerName + " sent a " + frameName(kind) + " frame before it proved who it is"
          + " (only its first SEND is taken then)", true);
      return;
    }
    switch (kind) {
      case SEND -> {
        Recv r = recvs.poll();
        if (r == null) {
          breakEndpoint(peerName + " sent a message with no receive posted for it", true);
        } else if (length < 0 || length > r.length || length > MAX_SEND_FRAME) {
          complete(r.wrId, Opcode.RECV, Status.LOCAL_LENGTH_ERROR, 0, "a " + length
              + "-byte message for a " + r.length + "-byte receive");
          breakEndpoint(peerName + " sent a message longer than the receive posted for it", false);
        } else if (length == 0) {
          complete(r.wrId, Opcode.RECV, Status.SUCCESS, 0, null);
          readHeader();
        } else {
          readBody(r.address, length, () -> {
            complete(r.wrId, Opcode.RECV, Status.SUCCESS, length, null);
            readHeader();
          });
        }
      }
      case WRITE -> {
        if (length < WRITE_PREFIX) {
          breakEndpoint(peerName + " sent a WRITE frame of " + length + " bytes", true);
          return;
        }
        writePrefix.clear();
        readBody(UcxUtils.getAddress(writePrefix), WRITE_PREFIX, () -> onWrite(length - WRITE_PREFIX));
      }
      case RKEY, REVOKE -> {
        if (kind == RKEY ? length < RKEY_PREFIX || length > MAX_RKEY_FRAME : length != 4) {
          breakEndpoint(peerName + " sent a " + frameName(kind) + " frame of " + length + " bytes",
              true);
          return;
        }
        // Key frames' bodies land in a buffer of the endpoint's own, made at the first.
        ByteBuffer body = buffers.keyFrame(MAX_RKEY_FRAME).clear().limit(length);
        readBody(UcxUtils.getAddress(body), length, () -> {
          if (state == State.CLOSED) {
            return; // as in onHeader
          }
          if (kind == RKEY) {
            announced(body);
          } else {
            RemoteRegion gone = remote.remove(body.getInt(0));
            if (gone != null) {
              gone.revoke();
            }
          }
          readHeader();
        });
      }
      default -> breakEndpoint(peerName + " sent an unknown frame kind " + kind
          + " on the UCX stream (not a gpudirect peer?)", true);
    }
  }

  private static String frameName(int kind) {
    return switch (kind) {
      case SEND -> "SEND";
      case RKEY -> "RKEY";
      case REVOKE -> "REVOKE";
      case WRITE -> "WRITE";
      default -> "kind " + kind;
    };
  }

  /**
   * A WRITE frame's prefix has arrived: its bytes are received in place if they fall inside a
   * region this side announced and has not revoked (a NIC's rkey check, done by the receiver).
   */
  private void onWrite(int bytes) {
    if (state == State.CLOSED) {
      return; // as in onHeader
    }
    int id = writePrefix.getInt(0);
    long address = writePrefix.getLong(4);
    UcxRegion region = writable.get(id);
    if (region == null || !region.covers(address, bytes)) {
      breakEndpoint(peerName + " sent a WRITE of " + bytes + " bytes at 0x" + Long.toHexString(address)
          + (region == null ? " with rkey " + id + ", which is not a region of this side's"
              : " outside rkey " + id + "'s region"), true);
    } else if (bytes == 0) {
      readHeader();
    } else {
      receivingInto = region;
      readBody(address, bytes, () -> {
        receivingInto = null;
        readHeader();
      });
    }
  }

  /** An RKEY frame's body (id, address, length, flags, packed key) is in {@code body}. */
  private void announced(ByteBuffer body) {
    int id = body.getInt(0);
    long address = body.getLong(4);
    long length = body.getLong(12);
    boolean peerNativePuts = (body.getInt(20) & NATIVE_PUTS) != 0;
    if (length < 0) {
      breakEndpoint(peerName + " announced rkey " + id + " for a region of " + length + " bytes", true);
      return;
    }
    if (remote.size() >= MAX_REMOTE_KEYS && !remote.containsKey(id)) {
      breakEndpoint(peerName + " announced more than " + MAX_REMOTE_KEYS
          + " remotely writable regions at once", true);
      return;
    }
    PackedRemoteKey packed;
    try {
      packed = PackedRemoteKey.check(body.duplicate().position(RKEY_PREFIX));
    } catch (IllegalArgumentException e) {
      breakEndpoint(peerName + " announced rkey " + id + " with " + e.getMessage(), true);
      return;
    }
    RemoteRegion old = remote.put(id, new RemoteRegion(id, address, length, peerNativePuts, packed));
    if (old != null) {
      old.revoke();
    }
  }

  /**
   * Receives {@code length} bytes at {@code address}, then runs {@code then}. One receive is
   * outstanding at a time (a header, then its body), so its continuation has one slot.
   */
  private void readBody(long address, int length, Runnable then) {
    if (state == State.CLOSED) {
      return;
    }
    endpoint.recvStreamNonBlocking(address, length, UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL,
        callback(req -> received(then), (status, message) -> receiveFailed(message)));
  }

  /**
   * Runs a receive's continuation, iteratively. When the bytes are already there, jucx calls the
   * callback inside {@code recvStreamNonBlocking}, on this stack; a continuation that posts the
   * next receive would then recurse once per frame, and a peer that sends a few thousand small
   * frames at once overflowed the native stack (a SIGSEGV inside jucx, found by
   * HostileServerFuzzTest). A callback that arrives while a continuation runs only leaves the
   * next one here, and the loop below runs it once the stack has unwound.
   */
  private void received(Runnable then) {
    nextReceived = then;
    if (runningReceived) {
      return;
    }
    runningReceived = true;
    try {
      while (nextReceived != null) {
        Runnable r = nextReceived;
        nextReceived = null;
        r.run();
      }
    } finally {
      runningReceived = false;
    }
  }

  private void receiveFailed(String message) {
    if (state != State.CLOSED) {
      breakEndpoint("receive from " + peerName + " failed: " + message, true);
    }
  }

  /** Called by UCX when the endpoint fails: the peer died, reset, or timed out. */
  void peerFailed(int status, String message) {
    onLoop(() -> {
      if (state == State.CONNECTING && connectFailed != null) {
        connectFailed.accept(message);
      }
      breakEndpoint("UCX: " + message + " (status " + status + ")", true);
    });
  }

  private void failed(Op op, int status, String message) {
    if (op.done) {
      return;
    }
    Status s = state == State.CLOSED || status == UcsConstants.STATUS.UCS_ERR_CANCELED ? Status.FLUSHED
        : status == UcsConstants.STATUS.UCS_ERR_ENDPOINT_TIMEOUT
            || status == UcsConstants.STATUS.UCS_ERR_CONNECTION_RESET
            || status == UcsConstants.STATUS.UCS_ERR_UNREACHABLE ? Status.RETRY_EXCEEDED : Status.OTHER;
    finish(op, s, 0, "UCX: " + message + " (status " + status + ")");
    if (s != Status.FLUSHED) {
      breakEndpoint(op.opcode + " failed: " + message, false);
    }
  }

  private void finish(Op op, Status status, int bytes, String detail) {
    if (op.done) {
      return;
    }
    op.done = true;
    outstanding.remove(op);
    if (op.frame != null && !op.handedOver) {
      frames.give(op.frame);
    }
    if (op.wrId >= 0) {
      sendsPosted.decrementAndGet();
      complete(op.wrId, op.opcode, status, bytes, detail);
    }
  }

  private void complete(long wrId, Opcode opcode, Status status, int bytes, String detail) {
    if (handler != null) {
      handler.onCompletion(new WorkCompletion(wrId, opcode, status, bytes, detail));
    }
  }

  /**
   * RC's error state: closes the UCX endpoint (the peer's error handler fires) and completes
   * everything outstanding as flushed. {@code disconnected}: tell the handler the connection is gone.
   */
  private void breakEndpoint(String why, boolean disconnected) {
    if (state == State.CLOSED) {
      return;
    }
    boolean wasOpen = state == State.OPEN;
    state = State.CLOSED;
    closedBecause = why;
    // Closing the endpoint ends its receives (UCX completes them as canceled): none writes on.
    receivingInto = null;
    UcpRequest closing = null;
    try {
      if (endpoint != null) {
        closing = endpoint.closeNonBlockingForce();
      }
    } catch (RuntimeException e) {
      // already gone
    }
    List<Op> flushed = new ArrayList<>(outstanding);
    flushed.addAll(waitingForFlush);
    waitingForFlush.clear();
    for (Op op : flushed) {
      finish(op, Status.FLUSHED, 0, why);
    }
    for (Recv r; (r = recvs.poll()) != null; ) {
      complete(r.wrId, Opcode.RECV, Status.FLUSHED, 0, why);
    }
    remote.values().forEach(RemoteRegion::revoke);
    remote.clear();
    if (disconnected && wasOpen && handler != null) {
      handler.onDisconnected(why);
    }
    if (!givenBack) {
      givenBack = true;
      // Until UCX's close completes it may still finish a canceled send or receive: the loop,
      // the memory it may receive into (the buffers' and that of those who wait on released())
      // stays until then.
      buffers.close(closedByUcx);
      Runnable done = () -> {
        closedByUcx.complete(null);
        loop.release();
      };
      if (loop.inLoop()) {
        loop.whenDone(closing, done);
      } else {
        done.run(); // the loop has stopped: UCX's endpoint went with its worker
      }
    }
  }

  @Override
  public java.util.concurrent.CompletableFuture<Void> released() {
    return closedByUcx;
  }

  /** Runs {@code r} on the loop: inline when already there, so a handler's reposts keep their order. */
  private void onLoop(Runnable r) {
    if (loop.inLoop()) {
      r.run();
      return;
    }
    try {
      loop.execute(r);
    } catch (IllegalStateException stopped) {
      // The loop stops only once this endpoint is closed, and on a closed endpoint every task
      // only completes its work request as flushed, touching no UCX object: run it here.
      r.run();
    }
  }

  @Override
  public void close() {
    if (state == State.CLOSED && !loop.inLoop()) {
      return;
    }
    try {
      loop.call(() -> {
        breakEndpoint("closed by this side", false);
        return null;
      }, CALL_TIMEOUT);
    } catch (IllegalStateException e) {
      // the loop is gone already: so is the endpoint
    }
  }

  interface Failure {
    void accept(int status, String message);
  }

  private static UcxCallback callback(Consumer<UcpRequest> ok, Failure error) {
    return new UcxCallback() {
      @Override
      public void onSuccess(UcpRequest request) {
        ok.accept(request);
      }

      @Override
      public void onError(int status, String message) {
        error.accept(status, message);
      }
    };
  }
}
