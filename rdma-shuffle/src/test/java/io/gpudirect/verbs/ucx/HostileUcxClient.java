package io.gpudirect.verbs.ucx;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * A UCX peer that connects to a gpudirect server's RDMA listener and puts on the stream whatever
 * bytes a test gives it: frames a client never would send, without a token or after one. Real
 * UCX, over TCP; nothing is a double. Every stranger is an endpoint on this JVM's one UCX
 * worker, as a real client's connections are: a worker each, made and closed hundreds of times
 * in this JVM, runs into UCX's own bug before 1.18 and aborts the test's JVM ({@link WorkerLoop}).
 */
final class HostileUcxClient implements AutoCloseable {
  private static final Duration CALL = Duration.ofSeconds(10);
  private final WorkerLoop loop;
  private final UcpEndpoint endpoint;
  /** Completes with UCX's message when the server's side goes away (it closed the connection). */
  private final CompletableFuture<String> closedByServer = new CompletableFuture<>();

  HostileUcxClient(InetSocketAddress server) {
    loop = UcxVerbs.open().loop();
    try {
      endpoint = loop.call(() -> loop.worker().newEndpoint(new UcpEndpointParams()
          .setSocketAddress(server).setPeerErrorHandlingMode()
          .setErrorHandler((ep, status, message) -> closedByServer.complete(message + " (status " + status + ")"))), CALL);
    } catch (RuntimeException e) {
      loop.release();
      throw e;
    }
  }

  /**
   * Strangers from two threads that connect to {@code at}, send a frame and drop at once, for as
   * long as {@code goOn} says; returns how many connected.
   */
  static long flood(InetSocketAddress at, java.util.function.BooleanSupplier goOn) throws InterruptedException {
    java.util.concurrent.atomic.AtomicLong connected = new java.util.concurrent.atomic.AtomicLong();
    Runnable churn = () -> {
      while (goOn.getAsBoolean()) {
        try (HostileUcxClient c = new HostileUcxClient(at)) {
          c.send(UcxFrames.send(ByteBuffer.wrap(new byte[] {1, 2, 3})));
          connected.incrementAndGet();
        } catch (Exception e) {
          // refused or reset: the server's to decide
        }
      }
    };
    Thread other = new Thread(churn, "test-stranger-flood");
    other.start();
    churn.run();
    other.join();
    return connected.get();
  }

  /** Puts {@code bytes} (direct) on the stream; false when UCX could not (the server closed it). */
  boolean send(ByteBuffer bytes) throws Exception {
    CompletableFuture<Boolean> sent = new CompletableFuture<>();
    try {
      loop.execute(() -> {
        try {
          endpoint.sendStreamNonBlocking(UcxUtils.getAddress(bytes), bytes.remaining(), new UcxCallback() {
            @Override
            public void onSuccess(UcpRequest request) {
              sent.complete(true);
            }

            @Override
            public void onError(int status, String message) {
              sent.complete(false);
            }
          });
        } catch (RuntimeException e) {
          sent.complete(false);
        }
      });
    } catch (IllegalStateException stopped) {
      return false;
    }
    return sent.get(CALL.toSeconds(), TimeUnit.SECONDS);
  }

  /** Receives exactly {@code n} bytes from the server's stream, or null when it closed first. */
  ByteBuffer receive(int n, Duration timeout) throws Exception {
    ByteBuffer into = ByteBuffer.allocateDirect(n);
    CompletableFuture<ByteBuffer> got = new CompletableFuture<>();
    loop.execute(() -> endpoint.recvStreamNonBlocking(UcxUtils.getAddress(into), n,
        org.openucx.jucx.ucp.UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL, new UcxCallback() {
          @Override
          public void onSuccess(UcpRequest request) {
            got.complete(into);
          }

          @Override
          public void onError(int status, String message) {
            got.complete(null);
          }
        }));
    try {
      return got.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      return null;
    }
  }

  /** Whether the server closed the connection within {@code timeout}. */
  boolean closedByServerWithin(Duration timeout) {
    try {
      closedByServer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    try {
      loop.call(() -> {
        endpoint.closeNonBlockingForce();
        return null;
      }, CALL);
    } catch (RuntimeException e) {
      // already gone
    } finally {
      loop.release();
    }
  }
}
