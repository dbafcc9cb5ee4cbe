package io.gpudirect.verbs.ucx;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * A UCX peer that accepts one client on loopback and puts on its stream whatever bytes a test
 * gives it: the frames a gpudirect server never would send, without the checks its own
 * {@link UcxEndpoint} makes before it sends a WRITE. Real UCX, over TCP, in a context and worker
 * of its own, as a server process would have; nothing is a double.
 */
final class HostileUcxServer implements AutoCloseable {
  private static final Duration CALL = Duration.ofSeconds(10);
  /** One context for every hostile server of the JVM, kept, as {@link UcxVerbs} keeps its own. */
  private static UcpContext context;

  private final WorkerLoop loop;
  private final UcpListener listener;
  private final CompletableFuture<UcpEndpoint> client = new CompletableFuture<>();
  /** Completes with UCX's message when the client's side of the connection goes away. */
  private final CompletableFuture<String> closedByClient = new CompletableFuture<>();

  HostileUcxServer() {
    loop = new WorkerLoop(context(), "test-hostile-ucx-server");
    listener = loop.call(() -> loop.worker().newListener(new UcpListenerParams()
        .setSockAddr(new InetSocketAddress("127.0.0.1", 0)).setConnectionHandler(this::accept)), CALL);
  }

  /** The context hostile servers of this JVM share. */
  static UcpContext sharedContext() {
    return context();
  }

  private static synchronized UcpContext context() {
    if (context == null) {
      context = new UcpContext(new UcpParams().requestStreamFeature().requestWakeupFeature()
          .setConfig("TLS", "tcp"));
    }
    return context;
  }

  /** On the loop thread. */
  private void accept(UcpConnectionRequest request) {
    if (client.isDone()) {
      request.reject();
      return;
    }
    client.complete(loop.worker().newEndpoint(new UcpEndpointParams().setConnectionRequest(request)
        .setPeerErrorHandlingMode()
        .setErrorHandler((ep, status, message) -> closedByClient.complete(message + " (status " + status + ")"))));
  }

  InetSocketAddress address() {
    return listener.getAddress();
  }

  /** A WRITE frame as {@link UcxEndpoint} reads one: kind, length, rkey number, address, then {@code bytes}. */
  static ByteBuffer writeFrame(int rkey, long address, int frameLength, byte[] bytes) {
    ByteBuffer b = ByteBuffer.allocateDirect(UcxEndpoint.HEADER_BYTES + UcxEndpoint.WRITE_PREFIX + bytes.length);
    b.putInt(UcxEndpoint.WRITE).putInt(frameLength).putInt(rkey).putLong(address).put(bytes).flip();
    return b;
  }

  /** Puts {@code bytes} (direct) on the client's stream and waits until UCX has sent them. */
  void send(ByteBuffer bytes) throws Exception {
    UcpEndpoint ep = client.get(CALL.toSeconds(), TimeUnit.SECONDS);
    CompletableFuture<Void> sent = new CompletableFuture<>();
    loop.execute(() -> ep.sendStreamNonBlocking(UcxUtils.getAddress(bytes), bytes.remaining(),
        new UcxCallback() {
          @Override
          public void onSuccess(UcpRequest request) {
            sent.complete(null);
          }

          @Override
          public void onError(int status, String message) {
            sent.completeExceptionally(new IllegalStateException(message + " (status " + status + ")"));
          }
        }));
    sent.get(CALL.toSeconds(), TimeUnit.SECONDS);
  }

  /** UCX's word that the client closed the connection, or a timeout. */
  String awaitClosedByClient(Duration timeout) throws Exception {
    return closedByClient.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    try {
      loop.call(() -> {
        if (client.isDone() && !client.isCompletedExceptionally()) {
          client.join().closeNonBlockingForce();
        }
        listener.close();
        return null;
      }, CALL);
    } finally {
      loop.release();
    }
  }
}
