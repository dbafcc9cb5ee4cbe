package io.gpudirect.verbs.ucx;

import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What a Spark executor does with UCX, in a process of its own: it serves over RDMA and reads
 * over RDMA at once, here from itself, a fresh connection every 20 ms that reads {@code FILE}
 * whole and checks it. {@code ROOT SECRET_FILE FILE}; prints {@code port N}, then
 * {@code workers N} (UCX workers open once both sides ran), then {@code reads N direct M} every
 * 50 reads (M: MiB of direct memory the JVM holds) and {@code read failed: …} for any that failed.
 */
public final class UcxExecutorProcess {
  private UcxExecutorProcess() {}

  public static void main(String[] args) throws Exception {
    byte[] secret = Files.readAllBytes(Path.of(args[1]));
    byte[] expected = Files.readAllBytes(Path.of(args[0]).resolve(args[2]));
    BlockServer server = BlockServer.builder().root(Path.of(args[0])).port(0).rdma(RdmaMode.ON)
        .rdmaProvider(RdmaProvider.UCX).secret(secret).build().start();
    System.out.println("port " + server.port());
    ConnectionThreads threads = new ConnectionThreads();
    ConnectionOptions options = new ConnectionOptions(secret, Duration.ofSeconds(10), "ucx-executor-process");
    RdmaTransport transport = new RdmaTransport(UcxVerbs.open(), threads);
    ByteBuffer dst = ByteBuffer.allocateDirect(expected.length);
    for (long reads = 1; ; reads++) {
      try (RdmaConnection c = transport.connect(new InetSocketAddress("127.0.0.1", server.port()), options)) {
        dst.clear();
        c.read(new ReadRequest(1, args[2], 0, expected.length), dst).get(30, TimeUnit.SECONDS);
        if (!dst.flip().equals(ByteBuffer.wrap(expected))) {
          System.out.println("read failed: wrong bytes");
        }
      } catch (Exception e) {
        System.out.println("read failed: " + e);
      }
      if (reads == 1) {
        System.out.println("workers " + WorkerLoop.open());
      }
      if (reads % 50 == 0) {
        System.out.println("reads " + reads + " direct " + (io.gpudirect.testing.DirectBytes.used() >> 20));
      }
      System.out.flush();
      Thread.sleep(20);
    }
  }
}
