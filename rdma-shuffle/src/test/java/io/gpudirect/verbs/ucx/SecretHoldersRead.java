package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What attacks on a server's queue pairs must never take: a reader that knows the secret reads a
 * whole file over RDMA (real UCX), right to the byte.
 */
final class SecretHoldersRead {
  private SecretHoldersRead() {}

  /**
   * Reads all of {@code file} from the server at {@code port} over a fresh RDMA connection, and
   * fails unless it holds {@code expected}; {@code within} bounds the read, not the connect.
   */
  static void assertReadsOverRdma(int port, ConnectionOptions options, ConnectionThreads threads,
      String file, byte[] expected, Duration within) throws Exception {
    try (RdmaConnection c = new RdmaTransport(UcxVerbs.open(), threads)
        .connect(new InetSocketAddress("127.0.0.1", port), options)) {
      ByteBuffer dst = ByteBuffer.allocateDirect(expected.length);
      c.read(new ReadRequest(1, file, 0, expected.length), dst).get(within.toMillis(), TimeUnit.MILLISECONDS);
      byte[] got = new byte[expected.length];
      dst.flip().get(got);
      assertArrayEquals(expected, got, "RDMA read of " + file + " by a reader that knows the secret");
    }
  }
}
