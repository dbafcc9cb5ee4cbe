package io.gpudirect.verbs;

import io.gpudirect.verbs.WorkCompletion.Opcode;
import io.gpudirect.verbs.WorkCompletion.Status;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import sun.misc.Unsafe;

/**
 * A TEST DOUBLE of RDMA verbs, in one JVM, for hosts with no RDMA device (all of ours). It is
 * strict where real HCAs are strict, so that the transport's use of verbs is checked, not just
 * exercised:
 * <ul>
 *   <li>one protection domain; registrations of at most {@code Integer.MAX_VALUE} bytes (as
 *       {@code ibv_mr.length}); lkeys and rkeys differ, so mixing them up fails;</li>
 *   <li>an RDMA WRITE lands only inside a live region with that rkey and REMOTE_WRITE access;
 *       otherwise the requester gets REMOTE_ACCESS_ERROR and both queue pairs go to error,
 *       flushing everything outstanding on either side (RC semantics);</li>
 *   <li>a SEND needs a posted receive at the peer at once (no RNR retries): the credit scheme
 *       must guarantee it; a receive too small is a LOCAL_LENGTH_ERROR;</li>
 *   <li>work requests of one queue pair run in order (so data lands before a later SEND), but
 *       the completions of a batch are handed out shuffled, as a shared completion queue may;</li>
 *   <li>injected faults: a failed next WRITE, a peer that dies (its clients see a disconnect),
 *       and a gate that holds WRITEs (a stalled server).</li>
 * </ul>
 * Memory is real: data moves by address with {@code Unsafe.copyMemory}, after the checks.
 * {@link #virtualMemory(long)} gives an address range with no memory behind it, for reads
 * larger than the heap: writes into it are checked the same way and recorded as CRC32Cs.
 */
public final class LoopbackVerbsDouble implements Verbs {
  private static final Unsafe UNSAFE = unsafe();
  private static final long BUFFER_ADDRESS = addressOffset();
  private static final long VIRTUAL_BASE = 0x7f00_0000_0000_0000L;

  private final Map<Integer, Listener> listeners = new ConcurrentHashMap<>();
  private final Map<Integer, Region> byLkey = new ConcurrentHashMap<>();
  private final Map<Integer, Region> byRkey = new ConcurrentHashMap<>();
  private final List<VirtualMemory> virtual = Collections.synchronizedList(new ArrayList<>());
  private final Set<Endpoint> endpoints = ConcurrentHashMap.newKeySet();
  private final AtomicInteger ports = new AtomicInteger(40000);
  private final AtomicInteger keys = new AtomicInteger(0x100);
  private final AtomicInteger endpointIds = new AtomicInteger();
  private final AtomicLong virtualNext = new AtomicLong(VIRTUAL_BASE);
  private final AtomicLong bytesWritten = new AtomicLong();
  private final AtomicLong registrations = new AtomicLong();
  private final AtomicReference<Status> failNextWrite = new AtomicReference<>();
  private final Random random = new Random(42);
  private volatile boolean shuffle = true;
  private final Object gate = new Object();
  private boolean writesHeld;
  private final java.util.concurrent.atomic.AtomicInteger writesWaiting = new java.util.concurrent.atomic.AtomicInteger();

  @Override
  public String describe() {
    return "LoopbackVerbsDouble (a test double: no RDMA hardware)";
  }

  // ---- knobs for tests

  /** Hands out each batch of completions in arrival order instead of shuffled. */
  public LoopbackVerbsDouble inOrderCompletions() {
    shuffle = false;
    return this;
  }

  /** The next RDMA WRITE fails with {@code status}; both queue pairs then go to error. */
  public void failNextWrite(Status status) {
    failNextWrite.set(status);
  }

  /** RDMA WRITEs wait until {@link #releaseWrites()}: a stalled server. */
  public void holdWrites() {
    synchronized (gate) {
      writesHeld = true;
    }
  }

  /** RDMA WRITEs posted and waiting at the gate of {@link #holdWrites()} now. */
  public int writesWaiting() {
    return writesWaiting.get();
  }

  public void releaseWrites() {
    synchronized (gate) {
      writesHeld = false;
      gate.notifyAll();
    }
  }

  /**
   * Every endpoint accepted by a listener dies at once, without a goodbye: its own work is
   * lost, and each client sees its receives flushed and a disconnect.
   */
  public void killServers() {
    for (Endpoint e : endpoints) {
      if (e.accepted) {
        e.die();
      }
    }
  }

  /** Bytes moved by successful RDMA WRITEs so far. */
  public long bytesWritten() {
    return bytesWritten.get();
  }

  /** Registrations made so far (including ones since closed). */
  public long registrations() {
    return registrations.get();
  }

  /** Registrations alive now. */
  public int liveRegions() {
    return byLkey.size();
  }

  /** Endpoints not yet closed or dead. */
  public long liveEndpoints() {
    return endpoints.stream().filter(e -> e.state != State.CLOSED).count();
  }

  /** An address range with nothing behind it, for huge destinations; see {@link VirtualMemory}. */
  public VirtualMemory virtualMemory(long length) {
    long base = virtualNext.getAndAdd((length + 0xFFFFF) & ~0xFFFFFL);
    VirtualMemory vm = new VirtualMemory(base, length);
    virtual.add(vm);
    return vm;
  }

  /**
   * A destination that is only addresses: each WRITE into it is checked like any other and
   * then recorded as (offset, length, CRC32C of the bytes), so a 3 GiB read can be verified
   * without 3 GiB of memory.
   */
  public static final class VirtualMemory {
    private final long address;
    private final long length;
    private final ConcurrentSkipListMap<Long, long[]> writes = new ConcurrentSkipListMap<>();

    VirtualMemory(long address, long length) {
      this.address = address;
      this.length = length;
    }

    public long address() {
      return address;
    }

    public long length() {
      return length;
    }

    /** offset → {length, crc32c} of each write, in offset order. */
    public Map<Long, long[]> writes() {
      return writes;
    }

    boolean contains(long a, long n) {
      return a >= address && a - address <= length - n;
    }
  }

  // ---- Verbs

  @Override
  public RdmaEndpoint connect(InetSocketAddress server, Duration timeout, QueueSizes sizes,
      EndpointSetup setup) {
    Listener l = listeners.get(server.getPort());
    String peer = "gpudirect server " + server.getHostString() + ":" + server.getPort();
    if (l == null || l.closed) {
      throw new RdmaException(RdmaException.Phase.CONNECT, peer,
          "RDMA_CM_EVENT_REJECTED: nothing listens on RDMA port " + server.getPort(), null);
    }
    Endpoint client = new Endpoint(sizes, new InetSocketAddress("127.0.0.1", 50000 + endpointIds.get()), false);
    Endpoint serverSide = new Endpoint(l.sizes, new InetSocketAddress("127.0.0.1", 50000 + endpointIds.get()), true);
    client.peer = serverSide;
    serverSide.peer = client;
    client.peerAddress = server;
    client.start(setup.prepare(client));
    try {
      serverSide.start(l.setup.prepare(serverSide));
    } catch (RuntimeException e) {
      serverSide.state = State.CLOSED;
      client.close();
      throw new RdmaException(RdmaException.Phase.CONNECT, peer, "RDMA_CM_EVENT_REJECTED: " + e.getMessage(), e);
    }
    serverSide.state = State.RTS;
    client.state = State.RTS;
    return client;
  }

  @Override
  public RdmaListener listen(InetSocketAddress bind, QueueSizes sizes, EndpointSetup setup) {
    int port = bind.getPort() == 0 ? ports.incrementAndGet() : bind.getPort();
    Listener l = new Listener(new InetSocketAddress(bind.getHostString(), port), sizes, setup);
    if (listeners.putIfAbsent(port, l) != null) {
      throw new RdmaException(RdmaException.Phase.CONNECT, "listener " + bind, "port " + port + " in use", null);
    }
    return l;
  }

  private final class Listener implements RdmaListener {
    final InetSocketAddress address;
    final QueueSizes sizes;
    final EndpointSetup setup;
    volatile boolean closed;

    Listener(InetSocketAddress address, QueueSizes sizes, EndpointSetup setup) {
      this.address = address;
      this.sizes = sizes;
      this.setup = setup;
    }

    @Override
    public InetSocketAddress address() {
      return address;
    }

    @Override
    public void close() {
      closed = true;
      listeners.remove(address.getPort(), this);
    }
  }

  // ---- memory

  private final class Region implements MemoryRegion {
    final long address;
    final long length;
    final Set<Access> access;
    final int lkey;
    final int rkey;
    final VirtualMemory vm;
    volatile boolean closed;

    Region(long address, long length, Set<Access> access, VirtualMemory vm) {
      this.address = address;
      this.length = length;
      this.access = EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
      int key = keys.incrementAndGet();
      this.lkey = key;
      this.rkey = key ^ 0x5A5A0000;
      this.vm = vm;
    }

    @Override
    public long address() {
      return address;
    }

    @Override
    public long length() {
      return length;
    }

    @Override
    public int lkey() {
      return lkey;
    }

    @Override
    public int rkey() {
      return rkey;
    }

    @Override
    public void close() {
      // Under the write lock: a WRITE being applied finishes first, later ones see it gone.
      synchronized (LoopbackVerbsDouble.this) {
        closed = true;
        byLkey.remove(lkey, this);
        byRkey.remove(rkey, this);
      }
    }
  }

  private MemoryRegion register(long address, long length, Set<Access> access, String peer) {
    if (address == 0 || length <= 0 || length > Integer.MAX_VALUE) {
      throw new RdmaException(RdmaException.Phase.REGISTER, peer, "ibv_reg_mr refuses " + length
          + " bytes at 0x" + Long.toHexString(address) + " (length must be 1.." + Integer.MAX_VALUE + ")", null);
    }
    if (access.contains(Access.REMOTE_WRITE) && !access.contains(Access.LOCAL_WRITE)) {
      throw new RdmaException(RdmaException.Phase.REGISTER, peer,
          "ibv_reg_mr: REMOTE_WRITE requires LOCAL_WRITE (EINVAL)", null);
    }
    VirtualMemory vm = null;
    if (address >= VIRTUAL_BASE) {
      synchronized (virtual) {
        for (VirtualMemory v : virtual) {
          if (v.contains(address, length)) {
            vm = v;
          }
        }
      }
      if (vm == null) {
        throw new RdmaException(RdmaException.Phase.REGISTER, peer, "ibv_reg_mr: no memory at 0x"
            + Long.toHexString(address) + " (EFAULT)", null);
      }
    }
    Region r = new Region(address, length, access, vm);
    byLkey.put(r.lkey, r);
    byRkey.put(r.rkey, r);
    registrations.incrementAndGet();
    return r;
  }

  private Region local(int lkey, long address, long length) {
    Region r = byLkey.get(lkey);
    return r != null && !r.closed && r.vm == null && r.covers(address, length) ? r : null;
  }

  // ---- endpoints

  private enum State { INIT, RTS, ERROR, CLOSED }

  private record Recv(long wrId, long address, int length, int lkey) {}

  /** A completion queue entry; {@code recv} tells which work queue it came from. */
  private record Cqe(WorkCompletion wc, boolean recv, String disconnect) {}

  private final class Endpoint implements RdmaEndpoint {
    final QueueSizes sizes;
    final InetSocketAddress ownAddress;
    final boolean accepted;
    final String name;
    volatile Endpoint peer;
    volatile InetSocketAddress peerAddress;
    volatile State state = State.INIT;
    volatile CompletionHandler handler;
    final ArrayDeque<Recv> recvs = new ArrayDeque<>();
    final LinkedBlockingQueue<Runnable> sendQueue = new LinkedBlockingQueue<>();
    final LinkedBlockingQueue<Cqe> cq = new LinkedBlockingQueue<>();
    final AtomicInteger sendsOutstanding = new AtomicInteger();
    Thread sq;
    Thread poller;
    volatile boolean disconnectReported;
    /** Completed once its send queue's thread, which reads the memory of WRITEs and SENDs, has ended. */
    final java.util.concurrent.CompletableFuture<Void> released = new java.util.concurrent.CompletableFuture<>();

    Endpoint(QueueSizes sizes, InetSocketAddress ownAddress, boolean accepted) {
      this.sizes = sizes;
      this.ownAddress = ownAddress;
      this.accepted = accepted;
      int id = endpointIds.incrementAndGet();
      this.name = (accepted ? "server-side " : "client-side ") + id;
      endpoints.add(this);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> released() {
      return released;
    }

    void start(CompletionHandler h) {
      this.handler = h;
      sq = new Thread(this::runSendQueue, "verbs-double-sq-" + name);
      poller = new Thread(this::runCompletions, "verbs-double-cq-" + name);
      sq.setDaemon(true);
      poller.setDaemon(true);
      sq.start();
      poller.start();
    }

    String peerName() {
      InetSocketAddress a = accepted ? peer.ownAddress : peerAddress;
      return (accepted ? "client " : "gpudirect server ") + a.getHostString() + ":" + a.getPort();
    }

    /** As over verbs: keys travel in messages, not to the endpoint; nothing to open up. */
    @Override
    public void admit() {}

    @Override
    public InetSocketAddress peer() {
      return accepted ? peer.ownAddress : peerAddress;
    }

    @Override
    public MemoryRegion register(long address, long length, Set<Access> access) {
      return LoopbackVerbsDouble.this.register(address, length, access, peerName());
    }

    @Override
    public MemoryRegion register(ByteBuffer direct, Set<Access> access) {
      if (!direct.isDirect()) {
        throw new IllegalArgumentException("only direct buffers can be registered");
      }
      return register(UNSAFE.getLong(direct, BUFFER_ADDRESS), direct.capacity(), access);
    }

    @Override
    public void postRecv(long wrId, MemoryRegion region, long offset, int length) {
      Recv r = new Recv(wrId, region.address() + offset, length, region.lkey());
      synchronized (this) {
        if (state == State.ERROR || state == State.CLOSED) {
          complete(wrId, Opcode.RECV, Status.FLUSHED, 0, "queue pair in error");
          return;
        }
        if (recvs.size() >= sizes.recvDepth()) {
          throw new RdmaException(RdmaException.Phase.POST, peerName(), "ibv_post_recv: receive queue full ("
              + sizes.recvDepth() + ") (ENOMEM)", null);
        }
        recvs.add(r);
      }
    }

    @Override
    public void postSend(long wrId, MemoryRegion region, long offset, int length) {
      post(wrId, () -> executeSend(wrId, region.address() + offset, length, region.lkey()));
    }

    @Override
    public void postWrite(long wrId, MemoryRegion region, long offset, int length, long remoteAddress, int rkey) {
      post(wrId, () -> executeWrite(wrId, region.address() + offset, length, region.lkey(), remoteAddress, rkey));
    }

    private void post(long wrId, Runnable wr) {
      if (sendsOutstanding.incrementAndGet() > sizes.sendDepth()) {
        sendsOutstanding.decrementAndGet();
        throw new RdmaException(RdmaException.Phase.POST, peerName(), "ibv_post_send: send queue full ("
            + sizes.sendDepth() + ") (ENOMEM)", null);
      }
      if (state == State.ERROR || state == State.CLOSED) {
        complete(wrId, Opcode.UNKNOWN, Status.FLUSHED, 0, "queue pair in error");
        return;
      }
      sendQueue.add(wr);
    }

    private void executeSend(long wrId, long address, int length, int lkey) {
      if (broken(wrId)) {
        return;
      }
      if (local(lkey, address, length) == null) {
        fail(wrId, Opcode.SEND, Status.LOCAL_PROTECTION_ERROR, "lkey 0x" + Integer.toHexString(lkey)
            + " does not cover " + length + " bytes at 0x" + Long.toHexString(address));
        return;
      }
      Endpoint p = peer;
      Recv r;
      synchronized (p) {
        if (p.state != State.RTS) {
          r = null;
        } else {
          r = p.recvs.poll();
        }
      }
      if (p.state == State.CLOSED || p.state == State.ERROR && r == null && p.disconnectReported) {
        fail(wrId, Opcode.SEND, Status.RETRY_EXCEEDED, "the peer does not answer");
        return;
      }
      if (r == null) {
        fail(wrId, Opcode.SEND, Status.RECEIVER_NOT_READY, "no receive posted at the peer for a SEND of "
            + length + " bytes");
        return;
      }
      if (r.length < length || local(r.lkey, r.address, r.length) == null
          || !byLkey.get(r.lkey).access.contains(Access.LOCAL_WRITE)) {
        p.complete(r.wrId, Opcode.RECV, Status.LOCAL_LENGTH_ERROR, 0, "receive of " + r.length
            + " bytes for a SEND of " + length + " (or receive buffer not writable)");
        fail(wrId, Opcode.SEND, Status.OTHER, "remote invalid request");
        return;
      }
      UNSAFE.copyMemory(address, r.address, length);
      p.complete(r.wrId, Opcode.RECV, Status.SUCCESS, length, "");
      complete(wrId, Opcode.SEND, Status.SUCCESS, 0, "");
    }

    private void executeWrite(long wrId, long address, int length, int lkey, long remote, int rkey) {
      synchronized (gate) {
        writesWaiting.incrementAndGet();
        try {
          while (writesHeld && state == State.RTS) {
            try {
              gate.wait(50);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
        } finally {
          writesWaiting.decrementAndGet();
        }
      }
      if (broken(wrId)) {
        return;
      }
      Status injected = failNextWrite.getAndSet(null);
      if (injected != null) {
        fail(wrId, Opcode.RDMA_WRITE, injected, "injected by the test");
        return;
      }
      if (local(lkey, address, length) == null) {
        fail(wrId, Opcode.RDMA_WRITE, Status.LOCAL_PROTECTION_ERROR, "lkey 0x" + Integer.toHexString(lkey)
            + " does not cover the source");
        return;
      }
      synchronized (LoopbackVerbsDouble.this) {
        Region target = byRkey.get(rkey);
        String refusal = target == null || target.closed ? "no region with rkey 0x" + Integer.toHexString(rkey)
            : !target.access.contains(Access.REMOTE_WRITE) ? "region rkey 0x" + Integer.toHexString(rkey)
                + " has no REMOTE_WRITE access"
            : !target.covers(remote, length) ? length + " bytes at 0x" + Long.toHexString(remote)
                + " run outside region [0x" + Long.toHexString(target.address) + ", +" + target.length + ")"
            : null;
        if (refusal != null) {
          fail(wrId, Opcode.RDMA_WRITE, Status.REMOTE_ACCESS_ERROR, refusal);
          return;
        }
        if (target.vm != null) {
          target.vm.writes.put(remote - target.vm.address, new long[] {length, crc(address, length)});
        } else {
          UNSAFE.copyMemory(address, remote, length);
        }
      }
      bytesWritten.addAndGet(length);
      complete(wrId, Opcode.RDMA_WRITE, Status.SUCCESS, 0, "");
    }

    /** True (and the request flushed) when the queue pair is already in error. */
    private boolean broken(long wrId) {
      if (state != State.RTS) {
        complete(wrId, Opcode.UNKNOWN, Status.FLUSHED, 0, "queue pair in error");
        return true;
      }
      return false;
    }

    /** A failed request breaks both queue pairs, as RC does. */
    private void fail(long wrId, Opcode op, Status status, String why) {
      complete(wrId, op, status, 0, why);
      toError();
      Endpoint p = peer;
      if (p != null) {
        p.toError();
      }
    }

    void toError() {
      List<Recv> flushed;
      synchronized (this) {
        if (state == State.ERROR || state == State.CLOSED) {
          return;
        }
        state = State.ERROR;
        flushed = new ArrayList<>(recvs);
        recvs.clear();
      }
      for (Recv r : flushed) {
        complete(r.wrId, Opcode.RECV, Status.FLUSHED, 0, "queue pair in error");
      }
    }

    /** This side dies: nothing it had is completed; its peer flushes and sees a disconnect. */
    void die() {
      synchronized (this) {
        state = State.CLOSED;
        recvs.clear();
      }
      sendQueue.clear();
      stopThreads();
      Endpoint p = peer;
      if (p != null) {
        p.toError();
        p.reportDisconnect("the peer died");
      }
    }

    void reportDisconnect(String reason) {
      if (!disconnectReported) {
        disconnectReported = true;
        cq.add(new Cqe(null, false, reason));
      }
    }

    /** {@code op} RECV for receives (flushed ones too); anything else frees a send queue entry. */
    void complete(long wrId, Opcode op, Status status, int bytes, String detail) {
      if (op != Opcode.RECV) {
        sendsOutstanding.decrementAndGet();
      }
      // As in verbs, the opcode of a failed completion is not known.
      cq.add(new Cqe(new WorkCompletion(wrId, status == Status.SUCCESS ? op : Opcode.UNKNOWN, status, bytes, detail),
          op == Opcode.RECV, null));
    }

    private void runSendQueue() {
      try {
        while (state != State.CLOSED || !sendQueue.isEmpty()) {
          Runnable wr = sendQueue.poll(50, TimeUnit.MILLISECONDS);
          if (wr != null) {
            wr.run();
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /**
     * Hands out completions in batches. Verbs keep each work queue's completions in order, but
     * a completion queue shared by the send and receive queues interleaves the two freely:
     * the double interleaves them at random, each queue's own order kept.
     */
    private void runCompletions() {
      List<Cqe> batch = new ArrayList<>();
      try {
        while (true) {
          Cqe first = cq.poll(50, TimeUnit.MILLISECONDS);
          if (first == null) {
            if (state == State.CLOSED && sendQueue.isEmpty()) {
              return;
            }
            continue;
          }
          batch.clear();
          batch.add(first);
          cq.drainTo(batch);
          for (Cqe e : shuffle ? interleave(batch) : batch) {
            if (e.disconnect() != null) {
              handler.onDisconnected(e.disconnect());
            } else {
              handler.onCompletion(e.wc());
            }
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private List<Cqe> interleave(List<Cqe> batch) {
      ArrayDeque<Cqe> recvSide = new ArrayDeque<>();
      ArrayDeque<Cqe> sendSide = new ArrayDeque<>();
      List<Cqe> out = new ArrayList<>(batch.size());
      for (Cqe e : batch) {
        if (e.disconnect() != null) {
          // A disconnect comes after everything before it.
          drainRandomly(recvSide, sendSide, out);
          out.add(e);
        } else {
          (e.recv() ? recvSide : sendSide).add(e);
        }
      }
      drainRandomly(recvSide, sendSide, out);
      return out;
    }

    private void drainRandomly(ArrayDeque<Cqe> a, ArrayDeque<Cqe> b, List<Cqe> out) {
      synchronized (random) {
        while (!a.isEmpty() || !b.isEmpty()) {
          boolean fromA = b.isEmpty() || (!a.isEmpty() && random.nextBoolean());
          out.add(fromA ? a.poll() : b.poll());
        }
      }
    }

    private void stopThreads() {
      if (sq != null) {
        sq.interrupt();
      }
    }

    @Override
    public void close() {
      List<Recv> flushed = List.of();
      boolean first;
      synchronized (this) {
        first = state != State.CLOSED;
        if (first) {
          flushed = new ArrayList<>(recvs);
          recvs.clear();
          state = State.CLOSED;
        }
      }
      if (first) {
        for (Recv r : flushed) {
          complete(r.wrId, Opcode.RECV, Status.FLUSHED, 0, "queue pair in error");
        }
        Runnable wr;
        while ((wr = sendQueue.poll()) != null) {
          wr.run();   // each one sees the closed state and flushes
        }
        Endpoint p = peer;
        if (p != null) {
          p.toError();
          p.reportDisconnect("the peer disconnected");
        }
        endpoints.remove(this);
      }
      Thread current = Thread.currentThread();
      for (Thread t : new Thread[] {sq, poller}) {
        if (t != null && t != current) {
          try {
            t.join(2000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      Thread queue = sq;
      if (queue == null || !queue.isAlive()) {
        released.complete(null);
      } else if (!released.isDone()) {
        Thread waiter = new Thread(() -> {
          try {
            queue.join();
          } catch (InterruptedException e) {
            return;
          }
          released.complete(null);
        }, "verbs-double-release-" + name);
        waiter.setDaemon(true);
        waiter.start();
      }
    }
  }

  private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(1 << 20));

  /** CRC32C of registered source memory, copied out through a scratch buffer. */
  private static long crc(long address, int length) {
    ByteBuffer scratch = SCRATCH.get();
    long scratchAddress = UNSAFE.getLong(scratch, BUFFER_ADDRESS);
    CRC32C crc = new CRC32C();
    for (int done = 0; done < length; ) {
      int n = Math.min(scratch.capacity(), length - done);
      UNSAFE.copyMemory(address + done, scratchAddress, n);
      crc.update(scratch.clear().limit(n));
      done += n;
    }
    return crc.getValue();
  }

  private static Unsafe unsafe() {
    try {
      Field f = Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the verbs double needs sun.misc.Unsafe", e);
    }
  }

  private static long addressOffset() {
    try {
      return UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("address"));
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
  }
}
