package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One file of known bytes, served over real UCX on loopback to a client on the same verbs, for
 * the tests of what a UCX endpoint does on both sides. Skips the class where UCX is not
 * installed. Register it on the class:
 *
 * <pre>{@code
 * @RegisterExtension static final UcxLoopback loopback = UcxLoopback.serving(1 << 20, 43);
 * }</pre>
 */
final class UcxLoopback implements BeforeAllCallback, AfterAllCallback {
  private static final String FILE = "d.bin";

  private final int size;
  private final long seed;
  private Path root;
  private byte[] data;
  private ConnectionThreads threads;

  private UcxLoopback(int size, long seed) {
    this.size = size;
    this.seed = seed;
  }

  /** A file of {@code size} bytes drawn from {@code seed}. */
  static UcxLoopback serving(int size, long seed) {
    return new UcxLoopback(size, seed);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    RdmaOverUcxConformanceTest.needsUcx();
    root = Files.createTempDirectory("ucx-loopback");
    data = TestFiles.write(root.resolve(FILE), size, seed);
    threads = new ConnectionThreads();
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    if (threads != null) {
      threads.close();
    }
    if (root != null) {
      Files.deleteIfExists(root.resolve(FILE));
      Files.delete(root);
    }
  }

  /**
   * A server with RDMA on {@code verbs}, and a client connected to it over the same verbs
   * (without a secret, its thread named {@code clientName}); closing it closes both.
   */
  Session connect(UcxVerbs verbs, String clientName) {
    BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON).verbs(() -> verbs).build().start();
    try {
      return new Session(server, new RdmaTransport(verbs, threads).connect(
          new InetSocketAddress("127.0.0.1", server.port()), new ConnectionOptions(null, Duration.ofSeconds(10), clientName)));
    } catch (RuntimeException | Error e) {
      server.close();
      throw e;
    }
  }

  /** A server and its one client. */
  final class Session implements AutoCloseable {
    private final BlockServer server;
    private final RdmaConnection client;

    private Session(BlockServer server, RdmaConnection client) {
      this.server = server;
      this.client = client;
    }

    /** Reads {@code length} bytes at {@code offset} as request {@code id}; fails unless they land byte for byte. */
    void assertReads(int id, int offset, int length) throws Exception {
      ByteBuffer dst = ByteBuffer.allocateDirect(length);
      client.read(new ReadRequest(id, FILE, offset, length), dst).get(30, TimeUnit.SECONDS);
      byte[] got = new byte[length];
      dst.duplicate().clear().get(got);
      assertArrayEquals(Arrays.copyOfRange(data, offset, offset + length), got);
    }

    @Override
    public void close() {
      try {
        client.close();
      } finally {
        server.close();
      }
    }
  }
}
