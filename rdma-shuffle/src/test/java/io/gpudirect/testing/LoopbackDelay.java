package io.gpudirect.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A loopback TCP proxy that holds every byte for {@code oneWay} in each direction before
 * forwarding it: a round trip of twice that between a client and a server on this host, as a
 * link across a data centre or a region has (the kernels here have no {@code netem}). Only the
 * latency is the link's: the bytes in flight are unbounded, so a protocol that keeps too few
 * requests outstanding waits on the round trip, and one that keeps enough does not.
 */
public final class LoopbackDelay implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final long oneWayNanos;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  public LoopbackDelay(int targetPort, long oneWay, TimeUnit unit) throws IOException {
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress("127.0.0.1", 0));
    this.targetPort = targetPort;
    this.oneWayNanos = unit.toNanos(oneWay);
    Thread acceptor = new Thread(this::acceptLoop, "test-delay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    try {
      while (true) {
        Socket client = listener.accept();
        Socket server = new Socket();
        try {
          server.connect(new InetSocketAddress("127.0.0.1", targetPort));
        } catch (IOException refused) {
          close(client);
          continue;
        }
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
        sockets.add(client);
        sockets.add(server);
        forward(client, server);
        forward(server, client);
      }
    } catch (IOException done) {
      // listener closed
    }
  }

  /** A piece of the stream and when it may go on. */
  private record Held(long dueNanos, byte[] bytes) {}

  private static final Held END = new Held(0, new byte[0]);

  /** One direction: a thread reads and stamps, another writes each piece once its time has come. */
  private void forward(Socket from, Socket to) {
    LinkedBlockingQueue<Held> line = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      byte[] buf = new byte[256 * 1024];
      try (InputStream in = from.getInputStream()) {
        for (int n; (n = in.read(buf)) >= 0; ) {
          line.add(new Held(System.nanoTime() + oneWayNanos, Arrays.copyOf(buf, n)));
        }
      } catch (IOException gone) {
        // one side went away
      } finally {
        line.add(END);
      }
    }, "test-delay-read");
    Thread writer = new Thread(() -> {
      try (OutputStream out = to.getOutputStream()) {
        for (Held h; (h = line.take()) != END; ) {
          for (long wait; (wait = h.dueNanos() - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(wait);
          }
          out.write(h.bytes());
        }
      } catch (IOException | InterruptedException gone) {
        // one side went away
      } finally {
        close(from);
        close(to);
      }
    }, "test-delay-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  private static void close(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    sockets.forEach(LoopbackDelay::close);
  }
}
