package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.verbs.CompletionHandler;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UCX listener on a socket address, on its context's one worker (which the endpoints it
 * accepts share with every other endpoint of the context).
 */
final class UcxListener implements RdmaListener {
  private static final Logger LOG = LoggerFactory.getLogger(UcxListener.class);

  private final WorkerLoop loop;
  private final UcpContext context;
  private final QueueSizes sizes;
  private final WritePaths writes;
  private final Verbs.EndpointSetup setup;
  private final BufferAllocator memory;
  private final UcpListener listener;
  private final InetSocketAddress address;
  private volatile boolean closed;

  /** Call on {@code loop}'s thread. */
  UcxListener(WorkerLoop loop, UcpContext context, InetSocketAddress bind, QueueSizes sizes,
      WritePaths writes, Verbs.EndpointSetup setup, BufferAllocator memory) {
    this.loop = loop;
    this.memory = memory;
    this.writes = writes;
    this.context = context;
    this.sizes = sizes;
    this.setup = setup;
    this.listener = loop.worker().newListener(new UcpListenerParams().setSockAddr(bind)
        .setConnectionHandler(this::accept));
    InetSocketAddress bound = listener.getAddress();
    this.address = bound != null ? bound : bind;
  }

  /** On the loop thread, inside progress. */
  private void accept(UcpConnectionRequest request) {
    if (closed) {
      request.reject();
      return;
    }
    InetSocketAddress client = request.getClientAddress();
    loop.retain();
    UcxEndpoint e = new UcxEndpoint(loop, context, client, "client " + UcxVerbs.describe(client), sizes,
        writes, false, memory);
    try {
      e.bind(loop.worker().newEndpoint(new UcpEndpointParams().setConnectionRequest(request)
          .setPeerErrorHandlingMode().setErrorHandler((ep, status, message) -> e.peerFailed(status, message))));
      CompletionHandler handler = setup.prepare(e);
      e.start(handler);
    } catch (RuntimeException ex) {
      LOG.warn("Refused a UCX connection from {}: {}", e.peerName(), ex.getMessage());
      e.close();
    }
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      loop.call(() -> {
        listener.close();
        return null;
      }, Duration.ofSeconds(10));
    } finally {
      loop.release();
    }
  }
}
