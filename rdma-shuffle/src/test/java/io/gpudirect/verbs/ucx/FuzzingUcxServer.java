package io.gpudirect.verbs.ucx;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * A hostile UCX server for clients: it accepts every connection and puts on its stream the
 * frames {@code script} gives for that connection's number, in order, then closes it. Real UCX
 * over TCP in a context and worker of its own (those of {@link HostileUcxServer}); counts the
 * frames UCX sent.
 */
final class FuzzingUcxServer implements AutoCloseable {
  private static final Duration CALL = Duration.ofSeconds(10);

  private final WorkerLoop loop;
  private final UcpListener listener;
  private final IntFunction<List<ByteBuffer>> script;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicLong framesSent = new AtomicLong();

  FuzzingUcxServer(IntFunction<List<ByteBuffer>> script) {
    this.script = script;
    loop = new WorkerLoop(HostileUcxServer.sharedContext(), "test-fuzzing-ucx-server");
    listener = loop.call(() -> loop.worker().newListener(new UcpListenerParams()
        .setSockAddr(new InetSocketAddress("127.0.0.1", 0)).setConnectionHandler(this::accept)), CALL);
  }

  /** On the loop thread. */
  private void accept(UcpConnectionRequest request) {
    List<ByteBuffer> frames = script.apply(accepted.getAndIncrement());
    UcpEndpoint ep = loop.worker().newEndpoint(new UcpEndpointParams().setConnectionRequest(request)
        .setPeerErrorHandlingMode().setErrorHandler((e, status, message) -> { }));
    sendAll(ep, frames);
  }

  /** Posts every frame (a stream keeps their order); closes once UCX is done with the last. */
  private void sendAll(UcpEndpoint ep, List<ByteBuffer> frames) {
    AtomicInteger left = new AtomicInteger(frames.size());
    Runnable oneDone = () -> {
      if (left.decrementAndGet() == 0) {
        ep.closeNonBlockingFlush();
      }
    };
    if (frames.isEmpty()) {
      ep.closeNonBlockingFlush();
      return;
    }
    for (ByteBuffer f : frames) {
      try {
        ep.sendStreamNonBlocking(UcxUtils.getAddress(f), f.remaining(), new UcxCallback() {
          @Override
          public void onSuccess(UcpRequest request) {
            framesSent.incrementAndGet();
            oneDone.run();
          }

          @Override
          public void onError(int status, String message) {
            oneDone.run();
          }
        });
      } catch (RuntimeException e) {
        oneDone.run();
      }
    }
  }

  int port() {
    return listener.getAddress().getPort();
  }

  long framesSent() {
    return framesSent.get();
  }

  int connections() {
    return accepted.get();
  }

  @Override
  public void close() {
    try {
      loop.call(() -> {
        listener.close();
        return null;
      }, CALL);
    } finally {
      loop.release();
    }
  }
}
