package io.gpudirect.verbs.disni;

import io.gpudirect.verbs.RdmaEndpoint;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.Verbs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A listening RDMA CM id and the thread that takes its events: connect requests (a queue pair
 * is made and set up, then accepted), and the disconnects of the endpoints it accepted, whose
 * CM events come on this channel.
 */
final class DisniListener implements RdmaListener {
  private final DisniVerbs verbs;
  private final RdmaEventChannel channel;
  private final RdmaCmId id;
  private final QueueSizes sizes;
  private final Verbs.EndpointSetup setup;
  private final InetSocketAddress address;
  private final Map<RdmaCmId, DisniEndpoint> endpoints = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile boolean closed;

  DisniListener(DisniVerbs verbs, RdmaEventChannel channel, RdmaCmId id, QueueSizes sizes,
      Verbs.EndpointSetup setup) throws IOException {
    this.verbs = verbs;
    this.channel = channel;
    this.id = id;
    this.sizes = sizes;
    this.setup = setup;
    this.address = (InetSocketAddress) id.getSource();
    this.thread = new Thread(this::eventLoop, "gpudirect-server-rdma-cm-" + address.getPort());
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  private void eventLoop() {
    while (!closed) {
      try {
        RdmaCmEvent event = channel.getCmEvent(200);
        if (event == null) {
          continue;
        }
        RdmaCmEvent.EventType type = RdmaCmEvent.EventType.values()[event.getEvent()];
        RdmaCmId conn = event.getConnIdPriv();
        event.ackEvent();
        switch (type) {
          case RDMA_CM_EVENT_CONNECT_REQUEST -> accept(conn);
          case RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL -> {
            DisniEndpoint ep = endpoints.remove(conn);
            if (ep != null) {
              ep.disconnected(type.name());
            }
          }
          default -> {
            // ESTABLISHED and TIMEWAIT_EXIT need nothing here
          }
        }
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          DisniVerbs.warn("RDMA CM events on " + address + " failed", e);
        }
      }
    }
  }

  private void accept(RdmaCmId conn) {
    InetSocketAddress peer;
    DisniEndpoint ep = null;
    try {
      peer = (InetSocketAddress) conn.getDestination();
      ep = DisniEndpoint.create(verbs, conn, null, peer, sizes, "client " + RdmaEndpoint.describe(peer));
      ep.start(setup.prepare(ep));
      endpoints.put(conn, ep);
      conn.accept(DisniVerbs.connParam());
    } catch (IOException | RuntimeException e) {
      DisniVerbs.warn("Refusing an RDMA connection on " + address, e);
      if (ep != null) {
        endpoints.remove(conn);
        ep.close();
      } else {
        try {
          conn.destroyId();
        } catch (IOException ignored) {
          // nothing left to free
        }
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      id.destroyId();
      channel.destroyEventChannel();
    } catch (IOException e) {
      DisniVerbs.warn("Closing the RDMA listener on " + address + " failed", e);
    }
  }
}
