package io.gpudirect.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP proxy for fault tests: forwards both ways, and on the first
 * {@code cutConnections} connections closes both sides once {@code cutAfterBytes} bytes have
 * come back from the server (or stalls there, drips, or flips that byte, as configured).
 * {@link #faultsInjected()} counts the faults that fired, so a test can prove its fault
 * happened; {@link #retarget(int)} points new connections at another server (a restart).
 */
public final class LoopbackCutter implements AutoCloseable {
  private final ServerSocket listener;
  private volatile int targetPort;
  private final long cutAfterBytes;
  private final int cutConnections;
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger faults = new AtomicInteger();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  /** Bytes forwarded from the server, per connection in the order accepted. */
  private final List<AtomicLong> fromServer = new CopyOnWriteArrayList<>();
  private final Thread acceptor;
  private volatile boolean stall;
  private volatile boolean corrupt;
  private volatile long corruptPeriod = Long.MAX_VALUE;
  private volatile long dripDelayMillis = -1;
  private volatile boolean hold;
  private volatile boolean released;

  public LoopbackCutter(int targetPort, long cutAfterBytes, int cutConnections) throws IOException {
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress("127.0.0.1", 0));
    this.targetPort = targetPort;
    this.cutAfterBytes = cutAfterBytes;
    this.cutConnections = cutConnections;
    this.acceptor = new Thread(this::acceptLoop, "test-cutter-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** At the byte limit, stop forwarding but keep both sockets open. */
  public LoopbackCutter stallInsteadOfClose() {
    stall = true;
    return this;
  }

  /**
   * At the byte limit, stop forwarding until {@link #release}, then forward the rest. The
   * socket to the server gets a small fixed receive buffer, so that a server sending a large
   * answer is held in its send call (sendfile) until then, not done with it.
   */
  public LoopbackCutter holdUntilReleased() {
    hold = true;
    return this;
  }

  /** Lets a connection held by {@link #holdUntilReleased} carry on. */
  public void release() {
    released = true;
  }

  /** After the byte limit, forward one byte every {@code delayMillis}: a peer that drips. */
  public LoopbackCutter dripInsteadOfClose(long delayMillis) {
    dripDelayMillis = delayMillis;
    return this;
  }

  /**
   * Instead of cutting, flip the byte at the limit, and every {@code period} bytes after it,
   * and carry on forwarding.
   */
  public LoopbackCutter corruptInsteadOfClose(long period) {
    corrupt = true;
    corruptPeriod = period;
    return this;
  }

  /** New connections go to {@code port} from now on; open ones are left as they are. */
  public void retarget(int port) {
    targetPort = port;
  }

  /** Closes every connection open now, both sides, as a server that went away would. */
  public void resetAll() {
    sockets.forEach(LoopbackCutter::close);
    sockets.clear();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** Connections accepted so far. */
  public int connections() {
    return accepted.get();
  }

  /** Bytes forwarded from the server to the client on connection {@code i} (0: the first accepted). */
  public long bytesFromServer(int i) {
    return i < fromServer.size() ? fromServer.get(i).get() : 0;
  }

  /** Cuts, stalls, drips and flipped bytes that have fired so far. */
  public int faultsInjected() {
    return faults.get();
  }

  private void acceptLoop() {
    try {
      while (true) {
        Socket client = listener.accept();
        Socket server;
        try {
          server = new Socket();
          if (hold) {
            server.setReceiveBufferSize(64 * 1024);
          }
          server.connect(new InetSocketAddress("127.0.0.1", targetPort));
        } catch (IOException refused) {
          // No server there (mid-restart): the client sees its connection closed.
          close(client);
          continue;
        }
        sockets.add(client);
        sockets.add(server);
        boolean cut = accepted.incrementAndGet() <= cutConnections;
        AtomicLong forwarded = new AtomicLong();
        fromServer.add(forwarded);
        pump(client, server, Long.MAX_VALUE, new AtomicLong());
        pump(server, client, cut ? cutAfterBytes : Long.MAX_VALUE, forwarded);
      }
    } catch (IOException done) {
      // listener closed
    }
  }

  private void pump(Socket from, Socket to, long limit, AtomicLong forwarded) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[8192];
      long sent = 0;
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        long max = corrupt || dripDelayMillis >= 0 || hold ? Long.MAX_VALUE : limit;
        while (sent < max) {
          int want = (int) Math.min(buf.length, max - sent);
          if (hold && limit != Long.MAX_VALUE) {
            if (sent == limit) {
              faults.incrementAndGet();
              while (!released && !listener.isClosed()) {
                Thread.sleep(5);
              }
            } else if (sent < limit) {
              want = (int) Math.min(want, limit - sent);
            }
          }
          if (dripDelayMillis >= 0 && limit != Long.MAX_VALUE) {
            if (sent >= limit) {
              if (sent == limit) {
                faults.incrementAndGet();
              }
              Thread.sleep(dripDelayMillis);
              want = 1;
            } else {
              want = (int) Math.min(want, limit - sent);
            }
          }
          int n = in.read(buf, 0, want);
          if (n < 0) {
            break;
          }
          if (corrupt && limit != Long.MAX_VALUE) {
            for (long at = limit; at < sent + n; at += corruptPeriod) {
              if (at >= sent) {
                buf[(int) (at - sent)] ^= 0x5a;
                faults.incrementAndGet();
              }
              if (corruptPeriod > Long.MAX_VALUE - at) {
                break;
              }
            }
          }
          out.write(buf, 0, n);
          sent += n;
          forwarded.addAndGet(n);
        }
        if (sent >= limit && limit != Long.MAX_VALUE && !corrupt && dripDelayMillis < 0 && !hold) {
          faults.incrementAndGet();
        }
        while (stall && !corrupt && sent >= limit && !listener.isClosed()) {
          Thread.sleep(20);
        }
      } catch (IOException | InterruptedException ignored) {
        // one side went away
      } finally {
        close(from);
        close(to);
      }
    }, "test-cutter-pump");
    t.setDaemon(true);
    t.start();
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
    sockets.forEach(LoopbackCutter::close);
  }
}
