package io.gpudirect.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * The wire without a protocol, for when iperf3 is not installed and as a second reference
 * beside it: plain loopback sockets, the sender using sendfile ({@code transferTo}) on the same
 * file over and over, each reader discarding into one 4 MiB direct buffer. No framing, no
 * checksum, no request: what the kernel can do with these bytes on this machine. Its variants
 * keep the bytes, and check them, as a fetch must.
 */
final class RawSocketBaseline {
  private static final int READ_BUFFER = 4 << 20;

  private RawSocketBaseline() {}

  static Measurement stream(Path file, int streams, double seconds) throws Exception {
    return stream(file, streams, seconds, READ_BUFFER);
  }

  /** As {@link #stream(Path, int, double)}, each reader discarding into {@code readBuffer} bytes. */
  static Measurement stream(Path file, int streams, double seconds, int readBuffer) throws Exception {
    return stream(file, streams, seconds, readBuffer, 1, false);
  }

  /**
   * As {@link #stream(Path, int, double)}, the readers keeping their bytes as a reader that hands
   * them on must: together they fill {@code heldBytes} of buffers (4 MiB each, each stream its share),
   * one after another, each whole before the next, so the bytes land in memory that left the
   * caches since its last turn, where one 4 MiB buffer a reader stays in them.
   */
  static Measurement streamKeeping(Path file, int streams, double seconds, long heldBytes) throws Exception {
    return streamKeeping(file, streams, seconds, heldBytes, false);
  }

  /**
   * As {@link #streamKeeping(Path, int, double, long)}, each reader, with {@code checking}, also
   * working out the CRC32C of every buffer it fills, read by read, as our client checks every
   * chunk's: the least CPU a fetch that keeps and verifies its bytes spends on this host, the
   * protocol left out.
   */
  static Measurement streamKeeping(Path file, int streams, double seconds, long heldBytes, boolean checking)
      throws Exception {
    return stream(file, streams, seconds, READ_BUFFER, (int) Math.max(1, heldBytes / streams / READ_BUFFER),
        checking);
  }

  private static Measurement stream(Path file, int streams, double seconds, int readBuffer, int buffersPerReader,
      boolean checking) throws Exception {
    try (ServerSocketChannel listener = ServerSocketChannel.open()) {
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      List<Thread> senders = new ArrayList<>();
      List<SocketChannel> clients = new ArrayList<>();
      for (int i = 0; i < streams; i++) {
        clients.add(SocketChannel.open(listener.getLocalAddress()));
        SocketChannel accepted = listener.accept();
        Thread t = new Thread(() -> sendForever(file, accepted), "raw-sender-" + i);
        t.setDaemon(true);
        t.start();
        senders.add(t);
      }
      AtomicLong received = new AtomicLong();
      long deadline = System.nanoTime() + (long) (seconds * 1e9);
      try {
        return Measurement.of(() -> {
          List<Thread> readers = new ArrayList<>();
          for (SocketChannel c : clients) {
            Thread t = new Thread(() -> received.addAndGet(drain(c, deadline, readBuffer, buffersPerReader, checking)),
                "raw-reader");
            t.start();
            readers.add(t);
          }
          for (Thread t : readers) {
            t.join();
          }
          return received.get();
        });
      } finally {
        for (SocketChannel c : clients) {
          c.close();
        }
        for (Thread t : senders) {
          t.join(5000);
        }
      }
    }
  }

  private static void sendForever(Path file, SocketChannel out) {
    try (out; FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = fc.size();
      while (true) {
        long pos = 0;
        while (pos < size) {
          pos += fc.transferTo(pos, size - pos, out);
        }
      }
    } catch (IOException e) {
      // the reader closed its end: the run is over
    }
  }

  /** Kept where the JIT cannot see it unused, so that the checksums are worked out. */
  static volatile int checksumSink;

  private static long drain(SocketChannel in, long deadline, int readBuffer, int buffers, boolean checking) {
    ByteBuffer[] bufs = new ByteBuffer[buffers];
    for (int b = 0; b < buffers; b++) {
      bufs[b] = ByteBuffer.allocateDirect(readBuffer);
    }
    long total = 0;
    try {
      for (int b = 0; System.nanoTime() < deadline; b = (b + 1) % buffers) {
        ByteBuffer buf = bufs[b].clear();
        // Each read's bytes are summed as they land, while they are in the cache, as our client does.
        CRC32C crc = checking ? new CRC32C() : null;
        int n = 0;
        while (buf.hasRemaining() && System.nanoTime() < deadline && (n = in.read(buf)) >= 0) {
          total += n;
          if (crc != null && n > 0) {
            crc.update(buf.slice(buf.position() - n, n));
          }
        }
        if (n < 0) {
          break;
        }
        if (crc != null) {
          checksumSink = (int) crc.getValue();
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("Raw socket baseline failed: " + e, e);
    }
    return total;
  }

  /**
   * Ping-pong: a 32-byte request, a 4 KiB answer read from the same file with pread, one at a
   * time, for {@code seconds}. The floor a remote 4 KiB read can reach on this loopback.
   */
  static Latencies pingPong(Path file, long fileBytes, int answerBytes, double seconds, long seed)
      throws Exception {
    try (ServerSocketChannel listener = ServerSocketChannel.open()) {
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
           SocketChannel server = listener.accept()) {
        client.socket().setTcpNoDelay(true);
        server.socket().setTcpNoDelay(true);
        Thread answerer = new Thread(() -> answer(file, server, answerBytes), "raw-pong");
        answerer.setDaemon(true);
        answerer.start();
        java.util.Random random = new java.util.Random(seed);
        ByteBuffer request = ByteBuffer.allocateDirect(32);
        ByteBuffer reply = ByteBuffer.allocateDirect(answerBytes);
        Latencies lat = new Latencies();
        // The timed part starts once warmed up: a loaded machine can spend the whole time on the warm-up.
        long deadline = Long.MAX_VALUE;
        int warmup = 200;
        while (warmup > 0 || System.nanoTime() < deadline) {
          long offset = (long) (random.nextDouble() * (fileBytes - answerBytes));
          request.clear().putLong(offset).position(32).flip();
          long t0 = System.nanoTime();
          while (request.hasRemaining()) {
            client.write(request);
          }
          reply.clear();
          while (reply.hasRemaining()) {
            if (client.read(reply) < 0) {
              throw new IOException("raw ping-pong server closed");
            }
          }
          long t = System.nanoTime() - t0;
          if (warmup > 0) {
            if (--warmup == 0) {
              deadline = System.nanoTime() + (long) (seconds * 1e9);
            }
          } else {
            lat.add(t);
          }
        }
        return lat;
      }
    }
  }

  private static void answer(Path file, SocketChannel ch, int answerBytes) {
    ByteBuffer request = ByteBuffer.allocateDirect(32);
    ByteBuffer reply = ByteBuffer.allocateDirect(answerBytes);
    try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
      while (true) {
        request.clear();
        while (request.hasRemaining()) {
          if (ch.read(request) < 0) {
            return;
          }
        }
        long offset = request.flip().getLong();
        reply.clear();
        while (reply.hasRemaining()) {
          fc.read(reply, offset + reply.position());
        }
        reply.flip();
        while (reply.hasRemaining()) {
          ch.write(reply);
        }
      }
    } catch (IOException e) {
      // the client closed: done
    }
  }
}
