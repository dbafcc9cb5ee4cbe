package io.gpudirect.transport.rdma;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.RdmaBind;
import io.gpudirect.protocol.RdmaBound;
import io.gpudirect.protocol.RdmaRead;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.protocol.RdmaShuffleDone;
import io.gpudirect.protocol.RdmaShuffleRead;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.Request;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionLostException;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.DeviceReads;
import io.gpudirect.transport.DeviceRegistration;
import io.gpudirect.transport.DeviceRegistrationException;
import io.gpudirect.transport.ReceivedWindow;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.WindowChecks;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.ControlSlots;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.WorkCompletion;
import io.gpudirect.verbs.WorkRequestTag;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client connection whose reads travel over RDMA: the TCP connection it wraps carries the
 * handshake, authentication and control calls (STAT, LIST, STATUS); a queue pair carries
 * RDMA_READ requests, the server's RDMA WRITEs into this client's registered memory, and the
 * RDMA_READ_DONE answers.
 *
 * <p>Credits: the server keeps {@code credits} receives posted for this queue pair, so at most
 * that many reads are outstanding on it; further reads wait here, in order, and go out as
 * answers come back. Every outstanding read also has a receive posted here for its answer.
 *
 * <p>Destinations: a direct buffer is registered for the one read (remote write access) and
 * deregistered before its future completes, so the server can never write into it afterwards;
 * a heap buffer is read into a registered bounce buffer and copied. Memory that stays
 * registered (device buffers) goes through {@link #readInto}. A window of a shuffle block
 * ({@link #readBlock}) goes into a bounce buffer of the most it may be, registered for it alone,
 * and is copied into the caller's memory once its answer has told how long it is.
 *
 * <p>Any failed work completion breaks the queue pair (RC semantics): every outstanding and
 * waiting read fails with an {@link RdmaConnectionException} naming the server and what failed.
 */
public final class RdmaConnection implements Connection, DeviceReads {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaConnection.class);

  private final Connection control;
  private final String server;
  private final boolean crc;
  private final int credits;
  private final BufferAllocator allocator;
  /** Checks payloads' checksums off the completion thread. */
  private final ConnectionThreads threads;
  private final Map<Long, Pending> outstanding = new ConcurrentHashMap<>();
  private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
  private RdmaEndpoint endpoint;
  /** Why these verbs cannot take GPU memory at all (a UCX built without CUDA), or null. */
  private String noDeviceMemory;
  private ControlSlots slots;
  /** Guarded by {@code this}. None until the server says the queue pair is bound. */
  private int freeCredits;
  /** Completes when RDMA_BOUND arrives: the server has posted the receives for the credits. */
  private final CompletableFuture<Void> bound = new CompletableFuture<>();
  private volatile GpuDirectException failure;

  /**
   * One read: an RDMA_READ, or an RDMA_SHUFFLE_READ ({@code block}). {@code region} is this
   * read's own registration (closed when it ends), null for {@link #readInto}; {@code bounce}
   * backs a heap destination or a shuffle window; {@code verify} is the host view the CRC32C is
   * checked on, null where the CPU cannot read the memory (a GPU).
   */
  private record Pending(Request request, CompletableFuture<Void> future, MemoryRegion region,
      HostBuffer bounce, ByteBuffer dst, ByteBuffer verify, AtomicReference<OptionalInt> crcOut,
      BlockRead block) {
    Pending(RdmaRead request, CompletableFuture<Void> future, MemoryRegion region, HostBuffer bounce,
        ByteBuffer dst, ByteBuffer verify, AtomicReference<OptionalInt> crcOut) {
      this(request, future, region, bounce, dst, verify, crcOut, null);
    }

    /** The file read; null for a shuffle window. */
    RdmaRead read() {
      return request instanceof RdmaRead r ? r : null;
    }
  }

  /**
   * A window of a shuffle block: {@code answer} gets its answer's header, and {@code memory}
   * binds the caller's memory for its bytes once that header is in; {@code received}, the window
   * as checked.
   */
  private record BlockRead(ShuffleRead read, BlockMemory memory, AtomicReference<ShuffleData> answer,
      AtomicReference<ReceivedWindow> received) {}

  private RdmaConnection(Connection control, RdmaSetupAck ack, boolean crc, BufferAllocator allocator,
      ConnectionThreads threads) {
    this.threads = threads;
    this.control = control;
    this.server = "gpudirect server " + RdmaEndpoint.describe(control.peer());
    this.crc = crc;
    this.credits = ack.credits();
    this.allocator = allocator;
  }


  /**
   * Connects the queue pair the server offered in {@code ack} and binds it to {@code control}.
   * On failure everything made so far is closed, {@code control} included.
   */
  static RdmaConnection open(Connection control, RdmaSetupAck ack, boolean crc, Verbs verbs,
      Duration timeout, BufferAllocator allocator, ConnectionThreads threads) {
    RdmaConnection c = new RdmaConnection(control, ack, crc, allocator, threads);
    c.noDeviceMemory = verbs.registersDeviceMemory() ? null : verbs.describe()
        + " cannot map GPU memory (UCX built without CUDA; see docs/deployment.md)";
    InetSocketAddress rdmaAddress = new InetSocketAddress(control.peer().getAddress(), ack.rdmaPort());
    try {
      // One send slot per credit plus the BIND; one receive per credit.
      c.endpoint = verbs.connect(rdmaAddress, timeout, new QueueSizes(ack.credits() + 1, ack.credits()),
          ep -> {
            c.slots = new ControlSlots(ep, allocator, ack.credits(), ack.credits() + 1, ack.slotBytes());
            for (int i = 0; i < ack.credits(); i++) {
              c.slots.postRecv(ep, i, WorkRequestTag.RECV.id(i));
            }
            return c.new Completions();
          });
      c.postSend(new RdmaBind(ack.token()));
      c.awaitBound(timeout);
      return c;
    } catch (RuntimeException e) {
      c.close();
      if (e instanceof RdmaConnectionException) {
        throw e;
      }
      if (e instanceof RdmaException r) {
        throw new RdmaConnectionException(r);
      }
      throw new RdmaConnectionException(RdmaException.Phase.CONNECT, c.server + " (RDMA port "
          + ack.rdmaPort() + ")", e.getMessage(), e);
    }
  }

  /** Waits for RDMA_BOUND: until then the server has no receive for a read. */
  private void awaitBound(Duration timeout) {
    try {
      bound.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new RdmaConnectionException(RdmaException.Phase.CONNECT, server, "the server did not"
          + " confirm the queue pair's RDMA_BIND within " + timeout, e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RdmaConnectionException r ? r : new RdmaConnectionException(
          RdmaException.Phase.CONNECT, server, "the queue pair failed before the server confirmed"
          + " its RDMA_BIND: " + cause.getMessage(), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RdmaConnectionException(RdmaException.Phase.CONNECT, server, "interrupted while"
          + " waiting for the server to confirm the queue pair's RDMA_BIND", e);
    }
  }

  @Override
  public InetSocketAddress peer() {
    return control.peer();
  }

  @Override
  public int maxReadLength() {
    return control.maxReadLength();
  }

  @Override
  public long capabilities() {
    return control.capabilities();
  }

  @Override
  public boolean isOpen() {
    return failure == null && control.isOpen();
  }

  /** The credits granted by the server: reads outstanding on the queue pair at most. */
  public int credits() {
    return credits;
  }

  @Override
  public CompletableFuture<Message> call(Request request) {
    return control.call(request);
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst) {
    return read(request, dst, null);
  }

  /**
   * As {@link #read}, leaving the CRC32C to the caller, who checks the bytes where they go next
   * (the GPU, in device memory): the future completes with the server's CRC32C.
   */
  @Override
  public CompletableFuture<OptionalInt> readUnverified(ReadRequest request, ByteBuffer dst) {
    AtomicReference<OptionalInt> crc = new AtomicReference<>(OptionalInt.empty());
    return read(request, dst, crc).thenApply(v -> crc.get());
  }

  /**
   * {@inheritDoc} The server puts the window into a bounce buffer of {@code request.maxLength()}
   * bytes, registered for this one request (and deregistered before the future completes); its
   * RDMA_SHUFFLE_DONE must answer exactly the window asked (as SHUFFLE_DATA over TCP), else the
   * connection breaks; then the bytes are checked against its CRC32C, or Spark's checksums of
   * their partitions where it carries those, and copied into the memory {@code memory} binds for
   * it.
   */
  @Override
  public CompletableFuture<ReceivedWindow> readBlock(ShuffleRead request, BlockMemory memory) {
    GpuDirectException f = failure;
    if (f != null) {
      return CompletableFuture.failedFuture(f);
    }
    CompletableFuture<Void> future = new CompletableFuture<>();
    BlockRead block = new BlockRead(request, memory, new AtomicReference<>(), new AtomicReference<>());
    // A window of no bytes still needs an address the server may name: one byte.
    submitInto(null, Math.max(1, request.maxLength()), future, (region, bounce, target) ->
        new Pending(new RdmaShuffleRead(request, region.address(), region.rkey()), future, region, bounce, null,
            crc ? bounce.nioBuffer() : null, null, block));
    return future.thenApply(v -> block.received().get());
  }

  private CompletableFuture<Void> read(ReadRequest request, ByteBuffer dst, AtomicReference<OptionalInt> crcOut) {
    if (dst.remaining() != request.length()) {
      throw new IllegalArgumentException("Destination has " + dst.remaining()
          + " bytes left for a READ of " + request.length());
    }
    CompletableFuture<Void> future = new CompletableFuture<>();
    GpuDirectException f = failure;
    if (f != null || request.length() == 0) {
      return f != null ? CompletableFuture.failedFuture(f) : CompletableFuture.completedFuture(null);
    }
    submitInto(dst.isDirect() ? dst.slice() : null, request.length(), future, (region, bounce, target) ->
        new Pending(new RdmaRead(request.requestId(), request.path(), request.version(), request.offset(),
            request.length(), region.address(), region.rkey()), future, region, bounce, dst,
            crc && crcOut == null ? target : null, crcOut));
    return future;
  }

  /** The read to send once its memory is registered: {@code target}, {@code bounce}'s when there is one. */
  private interface ReadInto {
    Pending pending(MemoryRegion region, HostBuffer bounce, ByteBuffer target);
  }

  /**
   * Registers the memory of one read, {@code direct} or, where that is null, a bounce buffer of
   * {@code bounceLength} bytes taken here, for that read alone, and submits the read {@code read}
   * makes of it. A failure before the read is out (no memory, no registration) gives both back
   * and fails {@code future}; from then on the read's completion does.
   */
  private void submitInto(ByteBuffer direct, int bounceLength, CompletableFuture<Void> future, ReadInto read) {
    MemoryRegion region = null;
    HostBuffer bounce = null;
    try {
      ByteBuffer target = direct;
      if (target == null) {
        bounce = allocator.allocate(bounceLength);
        target = bounce.nioBuffer();
      }
      region = register(target);
      submit(read.pending(region, bounce, target));
    } catch (RuntimeException e) {
      if (region != null) {
        region.close();
      }
      if (bounce != null) {
        bounce.close();
      }
      future.completeExceptionally(e);
    }
  }

  @Override
  public Optional<DeviceReads> deviceReads() {
    return Optional.of(this);
  }

  /**
   * {@inheritDoc} The range is registered as regions of at most {@link MemoryRegion#MAX_LENGTH}
   * bytes (see {@link RegisteredRange}); a registration the verbs refuse (no nvidia-peermem for
   * GPU memory) is a {@link DeviceRegistrationException} with the verbs' message.
   */
  @Override
  public DeviceRegistration register(long address, long length) {
    if (noDeviceMemory != null) {
      // Such a provider would take the device pointer for host memory: never hand it one.
      throw new DeviceRegistrationException(noDeviceMemory, null);
    }
    try {
      return RegisteredRange.register(this, address, length);
    } catch (RdmaConnectionException e) {
      if (e.phase() != RdmaException.Phase.REGISTER) {
        throw e;
      }
      throw new DeviceRegistrationException(e.getMessage(), e);
    }
  }

  @Override
  public CompletableFuture<Void> readInto(ReadRequest request, DeviceRegistration registration, long address) {
    if (!(registration instanceof RegisteredRange range)) {
      throw new IllegalArgumentException("not registered by an RDMA connection: " + registration);
    }
    return readInto(request, range.regionFor(address, request.length()), address);
  }

  /**
   * Reads into memory its owner has registered and keeps registered ({@code region}, on this
   * connection's device), at {@code address}. No checksum is verified here: the CPU may not
   * be able to read the memory (a GPU); RDMA's link-level CRCs cover the transfer.
   */
  public CompletableFuture<Void> readInto(ReadRequest request, MemoryRegion region, long address) {
    return readInto(request, address, region.rkey(), region.covers(address, request.length()));
  }

  /** As {@link #readInto(ReadRequest, MemoryRegion, long)}, naming the key directly (tests of bad keys). */
  CompletableFuture<Void> readInto(ReadRequest request, long address, int rkey, boolean inBounds) {
    if (!inBounds) {
      throw new IllegalArgumentException("READ of " + request.length() + " bytes at 0x"
          + Long.toHexString(address) + " does not fit its registered region");
    }
    GpuDirectException f = failure;
    if (f != null) {
      return CompletableFuture.failedFuture(f);
    }
    CompletableFuture<Void> future = new CompletableFuture<>();
    submit(new Pending(new RdmaRead(request.requestId(), request.path(), request.version(), request.offset(),
        request.length(), address, rkey), future, null, null, null, null, null));
    return future;
  }

  /** Registers memory on this connection's protection domain (caller closes the region). */
  public MemoryRegion register(long address, long length, boolean remoteWrite) {
    try {
      return endpoint.register(address, length, remoteWrite
          ? EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE) : EnumSet.of(Access.LOCAL_WRITE));
    } catch (RdmaException e) {
      throw new RdmaConnectionException(e);
    } catch (RuntimeException e) {
      throw new RdmaConnectionException(RdmaException.Phase.REGISTER, server, "cannot register "
          + length + " bytes at 0x" + Long.toHexString(address) + ": " + e.getMessage(), e);
    }
  }

  private MemoryRegion register(ByteBuffer target) {
    try {
      // LOCAL_WRITE is required alongside REMOTE_WRITE by ibv_reg_mr.
      return endpoint.register(target, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    } catch (RdmaException e) {
      throw new RdmaConnectionException(e);
    } catch (RuntimeException e) {
      throw new RdmaConnectionException(RdmaException.Phase.REGISTER, server, "cannot register a "
          + target.capacity() + "-byte destination: " + e.getMessage(), e);
    }
  }

  private void submit(Pending p) {
    synchronized (this) {
      if (failure == null) {
        waiting.add(p);
        p = null;
      }
    }
    if (p != null) {
      finish(p, failure);
      return;
    }
    pump();
  }

  /**
   * Sends waiting reads, in order, while there is a credit and a free send slot. A send slot
   * frees on its SEND completion, which the completion queue may yield after the answer it
   * caused, so slots are checked too rather than assumed.
   */
  private void pump() {
    while (true) {
      Pending p;
      int slot;
      synchronized (this) {
        if (failure != null || waiting.isEmpty() || freeCredits == 0) {
          return;
        }
        slot = slots.takeSendSlot();
        if (slot < 0) {
          return;
        }
        freeCredits--;
        p = waiting.poll();
      }
      send(p, slot);
    }
  }

  private void send(Pending p, int slot) {
    outstanding.put(p.request.requestId(), p);
    try {
      slots.postSend(endpoint, slot, WorkRequestTag.SEND.id(slot), p.request);
    } catch (RuntimeException e) {
      fail(e instanceof RdmaException r ? new RdmaConnectionException(r) : new RdmaConnectionException(RdmaException.Phase.POST, server,
          "cannot post the " + p.request.type() + " of request " + p.request.requestId() + ": " + e.getMessage(), e));
    }
    // A failure that raced with the put above may not have seen this read.
    if (failure != null && outstanding.remove(p.request.requestId()) != null) {
      finish(p, failure);
    }
  }

  private void postSend(Message m) {
    int slot = slots.takeSendSlot();
    if (slot < 0) {
      throw new IllegalStateException("no free send slot (credits " + credits + ")");
    }
    slots.postSend(endpoint, slot, WorkRequestTag.SEND.id(slot), m);
  }

  /** An answer came: its credit goes to the next waiting read. */
  private void creditReturned() {
    synchronized (this) {
      freeCredits++;
    }
    pump();
  }

  /** Ends {@code p}: its registration and bounce buffer go first, so nothing writes there after. */
  private void finish(Pending p, Throwable error) {
    if (p.region != null) {
      p.region.close();
    }
    if (error == null && p.block != null) {
      error = copyOut(p);
    } else if (error == null && p.dst != null) {
      // As over TCP, the destination's position moves past what was read.
      if (p.bounce != null) {
        p.dst.put(p.bounce.nioBuffer().limit(p.read().length()));
      } else {
        p.dst.position(p.dst.limit());
      }
    }
    if (p.bounce != null) {
      p.bounce.close();
    }
    if (error == null) {
      p.future.complete(null);
    } else {
      p.future.completeExceptionally(error);
    }
  }

  /**
   * A shuffle window's bytes, from its bounce buffer into the memory its caller binds for them
   * now that the answer told their length; null, or what failed this read alone (the binding).
   */
  private static RuntimeException copyOut(Pending p) {
    ShuffleData window = p.block.answer().get();
    try {
      ByteBuffer dst = p.block.memory().bind(window);
      if (dst.remaining() != window.length()) {
        throw new IllegalArgumentException("Destination has " + dst.remaining()
            + " bytes left for a window of " + window.length() + " bytes of " + p.block.read().block().name());
      }
      dst.put(p.bounce.nioBuffer().limit(window.length()));
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  private final class Completions implements CompletionHandler {
    @Override
    public void onCompletion(WorkCompletion wc) {
      if (!wc.ok()) {
        fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, wc.describe(), null));
        return;
      }
      int slot = WorkRequestTag.slot(wc.wrId());
      if (WorkRequestTag.of(wc.wrId()) == WorkRequestTag.SEND) {
        slots.releaseSendSlot(slot);
        pump();
        return;
      }
      Message m;
      try {
        m = slots.received(slot, wc.byteLength());
        // The slot is decoded: post it again before the credit can bring the next answer.
        slots.postRecv(endpoint, slot, WorkRequestTag.RECV.id(slot));
      } catch (RuntimeException e) {
        fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, "bad answer on the queue pair: "
            + e.getMessage(), e));
        return;
      }
      if (m instanceof RdmaBound) {
        synchronized (RdmaConnection.this) {
          if (bound.isDone()) {
            // handled below, outside the lock
            m = null;
          } else {
            freeCredits = credits;
          }
        }
        if (m == null) {
          fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server,
              "a second RDMA_BOUND on the queue pair", null));
          return;
        }
        bound.complete(null);
        pump();
      } else if (m instanceof RdmaReadDone done) {
        Pending p = take(done.requestId(), m);
        if (p == null) {
          return;
        }
        if (p.read() == null || done.length() != p.read().length()) {
          fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, "RDMA_READ_DONE for request "
              + done.requestId() + " says " + done.length() + " bytes, the request was "
              + (p.read() == null ? "a " + p.request.type() : "for " + p.read().length()), null));
          finish(p, failure);
          return;
        }
        creditReturned();
        if (p.crcOut != null && done.hasCrc()) {
          p.crcOut.set(OptionalInt.of(done.crc32c()));
        }
        if (p.verify != null && done.hasCrc()) {
          threads.verify(() -> verify(p, done.crc32c(), p.read().path(), p.read().offset(), done.length()));
        } else {
          finish(p, null);
        }
      } else if (m instanceof RdmaShuffleDone done) {
        Pending p = take(done.requestId(), m);
        if (p == null) {
          return;
        }
        ShuffleData window = done.window();
        if (p.block == null || !window.answers(p.block.read())) {
          // As over TCP: a window not asked for may name bytes the server never put.
          fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, "RDMA_SHUFFLE_DONE for request "
              + done.requestId() + " (block length " + window.blockLength() + ", offset " + window.offset()
              + ", length " + window.length() + ", " + window.version().describe() + ") does not answer its request "
              + (p.block == null ? p.request : p.block.read()), null));
          finish(p, failure);
          return;
        }
        creditReturned();
        p.block.answer().set(window);
        if (p.verify != null && window.checks().present()) {
          threads.verify(() -> verifyPartitions(p, window));
          return;
        }
        p.block.received().set(ReceivedWindow.whole(window));
        if (p.verify != null && done.hasCrc()) {
          threads.verify(() -> verify(p, done.crc32c(), p.block.read().block().name(), window.offset(),
              window.length()));
        } else {
          finish(p, null);
        }
      } else if (m instanceof ErrorResponse e) {
        Pending p = take(e.requestId(), m);
        if (p != null) {
          creditReturned();
          finish(p, new ServerErrorException(e.code(), e.message()));
        }
      } else {
        fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, "unexpected " + m.type()
            + " on the queue pair", null));
      }
    }

    @Override
    public void onDisconnected(String reason) {
      fail(new ConnectionLostException("RDMA connection to " + server + " lost: " + reason, null));
    }
  }

  private Pending take(long requestId, Message m) {
    Pending p = outstanding.remove(requestId);
    if (p == null && failure == null) {
      fail(new RdmaConnectionException(RdmaException.Phase.COMPLETION, server, m.type()
          + " for unknown request " + requestId, new ProtocolException(m.type() + " for unknown request")));
    }
    return p;
  }

  /** Checks the first {@code length} bytes of {@code p}'s memory, {@code what} from {@code offset}. */
  private void verify(Pending p, int expected, String what, long offset, int length) {
    CRC32C c = new CRC32C();
    c.update(p.verify.duplicate().clear().limit(length));
    int actual = (int) c.getValue();
    if (actual == expected) {
      finish(p, null);
    } else {
      finish(p, new ChecksumMismatchException(what, offset, length, "over RDMA from " + server,
          expected, actual));
    }
  }


  /** Checks a shuffle window in {@code p}'s memory against Spark's checksums of its partitions. */
  private void verifyPartitions(Pending p, ShuffleData window) {
    try {
      WindowChecks checks = new WindowChecks(p.block.read().block(), window);
      checks.update(p.verify.duplicate().clear().limit(window.length()));
      p.block.received().set(checks.verdict("over RDMA from " + server));
    } catch (RuntimeException e) {
      finish(p, e);
      return;
    }
    finish(p, null);
  }

  private void fail(GpuDirectException cause) {
    ArrayDeque<Pending> queued;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = cause;
      queued = new ArrayDeque<>(waiting);
      waiting.clear();
    }
    LOG.debug("RDMA connection to {} failed: {}", server, cause.getMessage());
    bound.completeExceptionally(cause);
    if (endpoint != null) {
      // Disconnecting moves the queue pair to error: the server's WRITEs can no longer land,
      // and each registration below is closed before its future fails.
      endpoint.close();
    }
    for (Long id : outstanding.keySet()) {
      Pending p = outstanding.remove(id);
      if (p != null) {
        finish(p, cause);
      }
    }
    queued.forEach(p -> finish(p, cause));
    control.abort(cause);
  }

  @Override
  public void abort(GpuDirectException cause) {
    fail(cause);
  }

  @Override
  public void close() {
    fail(new ConnectionLostException("Connection to " + server + " was closed by the client", null));
    control.close();
    if (endpoint != null) {
      // Again, now from the caller's thread: it returns once the last completion was handled,
      // so the control slots are no longer read when they are closed (their memory itself stays
      // until the provider has released the endpoint).
      endpoint.close();
    }
    if (slots != null) {
      slots.close();
    }
  }
}
