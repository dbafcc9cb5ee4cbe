package io.gpudirect.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.Verbs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Verbs} on DiSNI 2.1: RDMA CM for connections, one protection domain per device
 * context (shared by every endpoint on it, so a region registered through one endpoint serves
 * them all), and per endpoint a completion channel, one completion queue for sends and
 * receives sized so it cannot overflow, and an RC queue pair. Written for real hardware; it has
 * not run on any (there is none here): see the table in docs/deployment.md.
 *
 * <p>libdisni is loaded lazily by {@link #open()}; a host without it, or without an RDMA device,
 * gets an {@link RdmaUnavailableException} saying what is missing and how to install it.
 */
public final class DisniVerbs implements Verbs {
  private static final Logger LOG = LoggerFactory.getLogger(DisniVerbs.class);
  private static final int BACKLOG = 128;

  /** One protection domain per device context (keyed by its command fd). */
  private final Map<Integer, IbvPd> domains = new ConcurrentHashMap<>();

  private DisniVerbs() {}

  /** DiSNI on this host, or {@link RdmaUnavailableException} saying what is missing. */
  public static DisniVerbs open() {
    DisniLibrary.check();
    return new DisniVerbs();
  }

  /** Why DiSNI cannot run here, or null when it can (libdisni loads and a device exists). */
  public static String unavailableReason() {
    try {
      DisniLibrary.check();
      return null;
    } catch (RdmaUnavailableException e) {
      return e.getMessage();
    }
  }

  @Override
  public String describe() {
    return "DiSNI (" + DisniLibrary.describeDevices() + ")";
  }

  IbvPd domain(IbvContext context) throws IOException {
    IbvPd pd = domains.get(context.getCmd_fd());
    if (pd == null) {
      synchronized (domains) {
        pd = domains.get(context.getCmd_fd());
        if (pd == null) {
          pd = context.allocPd();
          if (pd == null) {
            throw new IOException("ibv_alloc_pd failed");
          }
          domains.put(context.getCmd_fd(), pd);
        }
      }
    }
    return pd;
  }

  @Override
  public RdmaEndpoint connect(InetSocketAddress server, Duration timeout, QueueSizes sizes,
      EndpointSetup setup) {
    String peer = "gpudirect server " + RdmaEndpoint.describe(server);
    int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    RdmaEventChannel channel = null;
    RdmaCmId id = null;
    DisniEndpoint endpoint = null;
    try {
      channel = RdmaEventChannel.createEventChannel();
      id = channel.createId(RdmaCm.RDMA_PS_TCP);
      id.resolveAddr(null, server, ms);
      expect(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED, ms, peer);
      id.resolveRoute(ms);
      expect(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED, ms, peer);
      endpoint = DisniEndpoint.create(this, id, channel, server, sizes, peer);
      endpoint.start(setup.prepare(endpoint));
      id.connect(connParam());
      expect(channel, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED, ms, peer);
      endpoint.established();
      return endpoint;
    } catch (IOException | RuntimeException e) {
      if (endpoint != null) {
        endpoint.close();
      } else {
        destroyQuietly(id, channel);
      }
      if (e instanceof RdmaException r) {
        throw r;
      }
      throw new RdmaException(RdmaException.Phase.CONNECT, peer, e.toString(), e);
    }
  }

  /**
   * Retries and depths: the HCA retransmits 7 times before failing a request with
   * RETRY_EXC_ERR (a dead peer), and retries receiver-not-ready forever (7): credits keep
   * receives posted, so an RNR only means the peer is momentarily behind. No RDMA READs or
   * atomics are issued, so no responder resources are needed.
   */
  static RdmaConnParam connParam() throws IOException {
    RdmaConnParam p = new RdmaConnParam();
    p.setRetry_count((byte) 7);
    p.setRnr_retry_count((byte) 7);
    p.setInitiator_depth((byte) 0);
    p.setResponder_resources((byte) 0);
    return p;
  }

  private static void expect(RdmaEventChannel channel, RdmaCmEvent.EventType wanted, int ms,
      String peer) throws IOException {
    RdmaCmEvent event = channel.getCmEvent(ms);
    if (event == null) {
      throw new RdmaException(RdmaException.Phase.CONNECT, peer, "no " + wanted + " within " + ms
          + " ms", null);
    }
    RdmaCmEvent.EventType got = RdmaCmEvent.EventType.values()[event.getEvent()];
    int status = event.getStatus();
    event.ackEvent();
    if (got != wanted) {
      throw new RdmaException(RdmaException.Phase.CONNECT, peer, "expected " + wanted + ", got "
          + got + " (status " + status + ")" + (got == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED
          ? ": the server refused the queue pair" : got == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE
          || got == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR ? ": no RDMA route to it (is its"
          + " address on an RDMA-capable interface?)" : ""), null);
    }
  }

  @Override
  public RdmaListener listen(InetSocketAddress bind, QueueSizes sizes, EndpointSetup setup) {
    String where = "listener " + RdmaEndpoint.describe(bind);
    RdmaEventChannel channel = null;
    RdmaCmId id = null;
    try {
      channel = RdmaEventChannel.createEventChannel();
      id = channel.createId(RdmaCm.RDMA_PS_TCP);
      id.bindAddr(bind);
      id.listen(BACKLOG);
      DisniListener l = new DisniListener(this, channel, id, sizes, setup);
      l.start();
      return l;
    } catch (IOException | RuntimeException e) {
      destroyQuietly(id, channel);
      throw new RdmaException(RdmaException.Phase.CONNECT, where, "cannot listen: " + e, e);
    }
  }

  /**
   * Turns {@code Access} into {@code IBV_ACCESS_*}. A client destination has LOCAL_WRITE and
   * REMOTE_WRITE (ibv_reg_mr refuses REMOTE_WRITE without LOCAL_WRITE).
   */
  public static int accessFlags(java.util.Set<Access> access) {
    int flags = 0;
    if (access.contains(Access.LOCAL_WRITE) || access.contains(Access.REMOTE_WRITE)) {
      flags |= IbvMr.IBV_ACCESS_LOCAL_WRITE;
    }
    if (access.contains(Access.REMOTE_WRITE)) {
      flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
    }
    if (access.contains(Access.REMOTE_READ)) {
      flags |= IbvMr.IBV_ACCESS_REMOTE_READ;
    }
    return flags;
  }

  /** Queue pair attributes: one SGE per request, sends and receives on one completion queue. */
  static IbvQPInitAttr qpAttributes(IbvCQ cq, QueueSizes sizes) {
    IbvQPInitAttr attr = new IbvQPInitAttr();
    attr.cap().setMax_send_wr(sizes.sendDepth());
    attr.cap().setMax_recv_wr(sizes.recvDepth());
    attr.cap().setMax_send_sge(1);
    attr.cap().setMax_recv_sge(1);
    attr.cap().setMax_inline_data(0);
    attr.setQp_type(IbvQP.IBV_QPT_RC);
    attr.setSend_cq(cq);
    attr.setRecv_cq(cq);
    return attr;
  }

  static IbvCQ completionQueue(IbvContext context, IbvCompChannel channel, QueueSizes sizes)
      throws IOException {
    return context.createCQ(channel, sizes.completionQueueDepth(), 0);
  }

  private static void destroyQuietly(RdmaCmId id, RdmaEventChannel channel) {
    try {
      if (id != null) {
        id.destroyId();
      }
      if (channel != null) {
        channel.destroyEventChannel();
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("Freeing an RDMA CM id failed", e);
    }
  }

  static void warn(String message, Throwable t) {
    LOG.warn(message, t);
  }
}
