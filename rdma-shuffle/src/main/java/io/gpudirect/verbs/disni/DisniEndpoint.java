package io.gpudirect.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.Set;

/**
 * One DiSNI queue pair with its completion channel and queue, and the thread that polls it.
 * The poller drains the completion queue, re-arms the notification, drains again (a completion
 * may arrive between the two) and then sleeps on the channel for up to 20 ms, so an idle
 * endpoint costs no CPU. A client endpoint owns its RDMA CM event channel and watches it for
 * DISCONNECTED from the same thread; a server endpoint's CM events arrive at its listener.
 */
final class DisniEndpoint implements RdmaEndpoint {
  private static final int POLL_BATCH = 32;
  private static final int WAIT_MS = 20;

  private final DisniVerbs verbs;
  private final RdmaCmId id;
  /** Null for a server endpoint: its CM events go to the listener's channel. */
  private final RdmaEventChannel ownChannel;
  private final InetSocketAddress peer;
  private final String peerName;
  /** Completed once the queue pair is destroyed ({@link #released()}). */
  private final java.util.concurrent.CompletableFuture<Void> destroyed = new java.util.concurrent.CompletableFuture<>();
  private final IbvPd pd;
  private final IbvCompChannel compChannel;
  private final IbvCQ cq;
  private final IbvQP qp;
  private final Thread poller;
  private volatile CompletionHandler handler;
  private volatile boolean closed;
  private volatile boolean disconnectReported;
  private volatile boolean established;
  private final java.util.Map<Long, SVCPostSend> sendCalls = new java.util.concurrent.ConcurrentHashMap<>();
  private final java.util.Map<Long, PreparedRecv> recvCalls = new java.util.concurrent.ConcurrentHashMap<>();

  private DisniEndpoint(DisniVerbs verbs, RdmaCmId id, RdmaEventChannel ownChannel,
      InetSocketAddress peer, String peerName, IbvPd pd, IbvCompChannel compChannel, IbvCQ cq,
      IbvQP qp) {
    this.verbs = verbs;
    this.id = id;
    this.ownChannel = ownChannel;
    this.peer = peer;
    this.peerName = peerName;
    this.pd = pd;
    this.compChannel = compChannel;
    this.cq = cq;
    this.qp = qp;
    this.poller = new Thread(this::pollLoop, "gpudirect-rdma-cq-" + RdmaEndpoint.describe(peer));
    this.poller.setDaemon(true);
  }

  /** Creates the completion channel, queue and queue pair on {@code id}'s device. */
  static DisniEndpoint create(DisniVerbs verbs, RdmaCmId id, RdmaEventChannel ownChannel,
      InetSocketAddress peer, QueueSizes sizes, String peerName) throws IOException {
    IbvContext context = id.getVerbs();
    if (context == null) {
      throw new IOException("RDMA CM id has no device context (address not resolved to an RDMA device)");
    }
    IbvPd pd = verbs.domain(context);
    IbvCompChannel compChannel = context.createCompChannel();
    IbvCQ cq = DisniVerbs.completionQueue(context, compChannel, sizes);
    IbvQP qp = id.createQP(pd, DisniVerbs.qpAttributes(cq, sizes));
    if (qp == null) {
      throw new IOException("rdma_create_qp failed (send " + sizes.sendDepth() + ", recv "
          + sizes.recvDepth() + "): check the device's max_qp_wr and the memlock limit");
    }
    return new DisniEndpoint(verbs, id, ownChannel, peer, peerName, pd, compChannel, cq, qp);
  }

  /** Sets the handler and starts polling (before the connection is established, so early receives are seen). */
  void start(CompletionHandler handler) {
    this.handler = handler;
    poller.start();
  }

  /**
   * Until now the connecting thread reads the CM channel (waiting for ESTABLISHED); from now
   * on the poller watches it for DISCONNECTED.
   */
  void established() {
    established = true;
  }

  /**
   * Nothing to open up: over verbs a peer announces no keys to this side (an rkey travels inside
   * the messages the server's session reads, and the NIC checks it), and an unproven peer's
   * SENDs can only land in the one receive its session posted for the BIND.
   */
  @Override
  public void admit() {}

  @Override
  public InetSocketAddress peer() {
    return peer;
  }

  @Override
  public MemoryRegion register(long address, long length, Set<Access> access) {
    MemoryRegion.checkLength(length, peerName);
    try {
      IbvMr mr = pd.regMr(address, (int) length, DisniVerbs.accessFlags(access)).execute().free().getMr();
      if (mr == null) {
        throw new IOException("ibv_reg_mr returned nothing");
      }
      return new DisniRegion(mr);
    } catch (IOException | RuntimeException e) {
      throw new RdmaException(RdmaException.Phase.REGISTER, peerName, "ibv_reg_mr of " + length
          + " bytes at 0x" + Long.toHexString(address) + " failed: " + e.getMessage()
          + " (GPU memory needs the nvidia-peermem module; host memory needs a memlock limit"
          + " above the registered size: ulimit -l)", e);
    }
  }

  @Override
  public MemoryRegion register(ByteBuffer direct, Set<Access> access) {
    if (!direct.isDirect()) {
      throw new IllegalArgumentException("only direct buffers can be registered");
    }
    return register(com.ibm.disni.util.MemoryUtils.getAddress(direct), direct.capacity(), access);
  }

  /**
   * Receives are always re-posted into the same slot with the same work request id, so the
   * prepared call is kept per id and executed again (DiSNI's stateful verb calls exist for
   * this: no JNI marshalling of a new request list per post).
   */
  @Override
  public void postRecv(long wrId, MemoryRegion region, long offset, int length) {
    IbvSge sge = sge(region, offset, length);
    try {
      PreparedRecv prepared = recvCalls.get(wrId);
      if (prepared == null || prepared.address != sge.getAddr() || prepared.length != length
          || prepared.lkey != sge.getLkey()) {
        if (prepared != null) {
          prepared.call.free();
        }
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(wrId);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        prepared = new PreparedRecv(qp.postRecv(List.of(wr), null), sge.getAddr(), length, sge.getLkey());
        recvCalls.put(wrId, prepared);
      }
      prepared.call.execute();
    } catch (IOException e) {
      throw new RdmaException(RdmaException.Phase.POST, peerName, "ibv_post_recv: " + e, e);
    }
  }

  @Override
  public void postSend(long wrId, MemoryRegion region, long offset, int length) {
    post(wrId, IbvSendWR.IBV_WR_SEND, region, offset, length, 0, 0);
  }

  @Override
  public void postWrite(long wrId, MemoryRegion region, long offset, int length, long remoteAddress,
      int rkey) {
    post(wrId, IbvSendWR.IBV_WR_RDMA_WRITE, region, offset, length, remoteAddress, rkey);
  }

  /**
   * Every send is signaled so each completes once. The transport reuses a small set of work
   * request ids (one per send slot, one per server chunk), so the prepared call is kept per id
   * and only its address, length, key and remote target are changed before each execute.
   */
  private void post(long wrId, int opcode, MemoryRegion region, long offset, int length,
      long remoteAddress, int rkey) {
    IbvSge sge = sge(region, offset, length);
    try {
      SVCPostSend call = sendCalls.get(wrId);
      if (call != null && call.getWrMod(0).getOpcode() != opcode) {
        call.free();
        call = null;
      }
      if (call == null) {
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setOpcode(opcode);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        call = qp.postSend(List.of(wr), null);
        sendCalls.put(wrId, call);
      }
      SVCPostSend.SendWRMod mod = call.getWrMod(0);
      SVCPostSend.SgeMod sgeMod = mod.getSgeMod(0);
      sgeMod.setAddr(sge.getAddr());
      sgeMod.setLength(length);
      sgeMod.setLkey(sge.getLkey());
      if (opcode == IbvSendWR.IBV_WR_RDMA_WRITE) {
        mod.getRdmaMod().setRemote_addr(remoteAddress);
        mod.getRdmaMod().setRkey(rkey);
      }
      call.execute();
    } catch (IOException e) {
      throw new RdmaException(RdmaException.Phase.POST, peerName, "ibv_post_send: " + e, e);
    }
  }

  private record PreparedRecv(SVCPostRecv call, long address, int length, int lkey) {}

  private static IbvSge sge(MemoryRegion region, long offset, int length) {
    if (offset < 0 || length < 0 || offset > region.length() - length) {
      throw new IllegalArgumentException(length + " bytes at offset " + offset
          + " do not fit the registered region of " + region.length());
    }
    IbvSge sge = new IbvSge();
    sge.setAddr(region.address() + offset);
    sge.setLength(length);
    sge.setLkey(region.lkey());
    return sge;
  }

  private void pollLoop() {
    IbvWC[] wcs = new IbvWC[POLL_BATCH];
    for (int i = 0; i < wcs.length; i++) {
      wcs[i] = new IbvWC();
    }
    SVCPollCq poll = null;
    try {
      poll = cq.poll(wcs, POLL_BATCH);
      while (!closed) {
        if (drain(poll, wcs) > 0) {
          continue;
        }
        cq.reqNotification(false).execute().free();
        if (drain(poll, wcs) > 0) {
          continue;
        }
        if (compChannel.getCqEvent(cq, WAIT_MS)) {
          cq.ackEvents(1);
        }
        if (ownChannel != null && established) {
          watchConnection();
        }
      }
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        disconnected("polling the completion queue failed: " + e);
      }
    } finally {
      if (poll != null) {
        poll.free();
      }
    }
  }

  private int drain(SVCPollCq poll, IbvWC[] wcs) throws IOException {
    int n = poll.execute().getPolls();
    for (int i = 0; i < n; i++) {
      handler.onCompletion(convert(wcs[i]));
    }
    return n;
  }

  private void watchConnection() throws IOException {
    RdmaCmEvent event = ownChannel.getCmEvent(0);
    if (event == null) {
      return;
    }
    RdmaCmEvent.EventType type = RdmaCmEvent.EventType.values()[event.getEvent()];
    event.ackEvent();
    if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED
        || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL) {
      disconnected(type.name());
    }
  }

  /** From the listener (server endpoints) or this poller (client endpoints). */
  void disconnected(String reason) {
    if (!disconnectReported) {
      disconnectReported = true;
      CompletionHandler h = handler;
      if (h != null) {
        h.onDisconnected(reason);
      }
    }
  }

  static WorkCompletion convert(IbvWC wc) {
    IbvWC.IbvWcStatus s = IbvWC.IbvWcStatus.valueOf(wc.getStatus());
    WorkCompletion.Status status = switch (s) {
      case IBV_WC_SUCCESS -> WorkCompletion.Status.SUCCESS;
      case IBV_WC_REM_ACCESS_ERR -> WorkCompletion.Status.REMOTE_ACCESS_ERROR;
      case IBV_WC_LOC_PROT_ERR -> WorkCompletion.Status.LOCAL_PROTECTION_ERROR;
      case IBV_WC_LOC_LEN_ERR -> WorkCompletion.Status.LOCAL_LENGTH_ERROR;
      case IBV_WC_WR_FLUSH_ERR -> WorkCompletion.Status.FLUSHED;
      case IBV_WC_RETRY_EXC_ERR -> WorkCompletion.Status.RETRY_EXCEEDED;
      case IBV_WC_RNR_RETRY_EXC_ERR -> WorkCompletion.Status.RECEIVER_NOT_READY;
      default -> WorkCompletion.Status.OTHER;
    };
    // The opcode of a failed completion is undefined in verbs.
    WorkCompletion.Opcode op = WorkCompletion.Opcode.UNKNOWN;
    if (status == WorkCompletion.Status.SUCCESS) {
      op = switch (IbvWC.IbvWcOpcode.valueOf(wc.getOpcode())) {
        case IBV_WC_SEND -> WorkCompletion.Opcode.SEND;
        case IBV_WC_RECV -> WorkCompletion.Opcode.RECV;
        case IBV_WC_RDMA_WRITE -> WorkCompletion.Opcode.RDMA_WRITE;
        default -> WorkCompletion.Opcode.UNKNOWN;
      };
    }
    return new WorkCompletion(wc.getWr_id(), op, status, wc.getByte_len(),
        status == WorkCompletion.Status.SUCCESS ? "" : s + ", vendor error 0x" + Integer.toHexString(wc.getVendor_err()));
  }

  /**
   * Disconnects (the queue pair goes to error and outstanding requests flush), then, once the
   * poller has handed out the last completion, destroys the queue pair, queue and channels.
   * From the poller's own thread it only disconnects; the owner's later close frees the rest.
   */
  @Override
  public void close() {
    boolean first;
    synchronized (this) {
      first = !closed;
      closed = true;
    }
    if (first) {
      try {
        id.disconnect();
      } catch (IOException | RuntimeException e) {
        DisniVerbs.warn("rdma_disconnect to " + peerName + " failed", e);
      }
    }
    if (Thread.currentThread() == poller) {
      return;
    }
    try {
      poller.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      if (!qp.isOpen() && !cq.isOpen()) {
        destroyed.complete(null);
        return;
      }
      sendCalls.values().forEach(SVCPostSend::free);
      recvCalls.values().forEach(r -> r.call.free());
      sendCalls.clear();
      recvCalls.clear();
      try {
        id.destroyQP();
        // The queue pair is gone: the NIC reads and writes no memory of its work requests any
        // more. Where destroying it failed, its memory is never freed early.
        destroyed.complete(null);
        cq.destroyCQ();
        compChannel.destroyCompChannel();
        id.destroyId();
        if (ownChannel != null) {
          ownChannel.destroyEventChannel();
        }
      } catch (IOException | RuntimeException e) {
        DisniVerbs.warn("Freeing the queue pair to " + peerName + " failed", e);
      }
    }
  }

  @Override
  public java.util.concurrent.CompletableFuture<Void> released() {
    return destroyed;
  }

  /** An {@code IbvMr}; closing deregisters it once. */
  private static final class DisniRegion implements MemoryRegion {
    private final IbvMr mr;
    private boolean closed;

    DisniRegion(IbvMr mr) {
      this.mr = mr;
    }

    @Override
    public long address() {
      return mr.getAddr();
    }

    @Override
    public long length() {
      return mr.getLength() & 0xFFFFFFFFL;
    }

    @Override
    public int lkey() {
      return mr.getLkey();
    }

    @Override
    public int rkey() {
      return mr.getRkey();
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        try {
          mr.deregMr().execute().free();
        } catch (IOException e) {
          DisniVerbs.warn("ibv_dereg_mr failed", e);
        }
      }
    }
  }
}
