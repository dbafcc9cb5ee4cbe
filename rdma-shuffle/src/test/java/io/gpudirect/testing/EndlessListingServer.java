package io.gpudirect.testing;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A hostile server: it speaks the real handshake, then answers every LIST with a page of
 * {@code entriesPerPage} new paths after the cursor, after {@code pageDelay}, and never with
 * the last page. What a client holds and how long it waits is then up to the client's limits.
 */
public final class EndlessListingServer implements AutoCloseable {
  private static final String PREFIX = "endless/";
  private static final String SUFFIX = ".parquet";
  private final ServerSocketChannel listener;
  private final int entriesPerPage;
  private final Duration pageDelay;
  private final Thread acceptor;
  private volatile boolean closed;

  public EndlessListingServer(int entriesPerPage, Duration pageDelay) throws IOException {
    this.entriesPerPage = entriesPerPage;
    this.pageDelay = pageDelay;
    listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    acceptor = new Thread(this::accept, "endless-listing-server");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() throws IOException {
    return ((InetSocketAddress) listener.getLocalAddress()).getPort();
  }

  private void accept() {
    while (!closed) {
      try {
        SocketChannel ch = listener.accept();
        Thread t = new Thread(() -> serve(ch), "endless-listing-connection");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(SocketChannel ch) {
    try (ch) {
      ByteBuffer magic = ByteBuffer.allocate(Protocol.MAGIC.length);
      Frames.readFully(ch, magic, false);
      Hello hello = (Hello) Frames.read(ch);
      write(ch, ByteBuffer.wrap(Protocol.MAGIC));
      write(ch, Frames.encode(new HelloAck(Protocol.VERSION,
          hello.capabilities() & (Protocol.CAP_TCP | Protocol.CAP_CRC32C), false,
          Auth.newNonce(), Protocol.DEFAULT_MAX_READ_LENGTH)));
      while (!closed) {
        Message m = Frames.read(ch);
        if (!(m instanceof ListRequest l)) {
          return;
        }
        long next = l.after().isEmpty() ? 0 : Long.parseLong(
            l.after().substring(PREFIX.length(), l.after().length() - SUFFIX.length())) + 1;
        Thread.sleep(pageDelay.toMillis());
        List<FileMeta> page = new ArrayList<>(entriesPerPage);
        for (int i = 0; i < entriesPerPage; i++) {
          page.add(new FileMeta(String.format(PREFIX + "%015d" + SUFFIX, next++), 1, 0, false,
              FileVersion.ANY));
        }
        write(ch, Frames.encode(ListResponse.more(l.requestId(), page,
            page.get(page.size() - 1).path())));
      }
    } catch (IOException | RuntimeException e) {
      // the client gave up: what this server is for
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void write(SocketChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
  }
}
