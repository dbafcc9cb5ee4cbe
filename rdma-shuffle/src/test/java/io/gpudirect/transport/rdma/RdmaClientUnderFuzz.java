package io.gpudirect.transport.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.tcp.TcpTransport;
import io.gpudirect.verbs.ucx.UcxVerbs;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A client in a process of its own, reading over UCX from a hostile server, for the fuzz test
 * of the queue pair's control stream (a native crash must fail that test, not the build):
 * {@code CONTROL_PORT HOSTILE_UCX_PORT CONNECTIONS}. Each connection's control channel is a
 * real server's TCP connection; its queue pair goes to the hostile UCX listener, whose frames
 * the client must survive; every other connection's request is a shuffle window. Prints one line per connection and {@code survived N} at the end;
 * exits 2 if a read ever succeeded (a hostile server has nothing a client should take for data).
 */
public final class RdmaClientUnderFuzz {
  private RdmaClientUnderFuzz() {}

  public static void main(String[] args) throws Exception {
    int controlPort = Integer.parseInt(args[0]);
    int hostilePort = Integer.parseInt(args[1]);
    int connections = Integer.parseInt(args[2]);
    Duration timeout = Duration.ofSeconds(5);
    try (ConnectionThreads threads = new ConnectionThreads()) {
      TcpTransport tcp = new TcpTransport(threads);
      UcxVerbs verbs = UcxVerbs.open();
      BufferAllocator allocator = BufferAllocator.newRoot("fuzzed-client", 1L << 30);
      for (int i = 0; i < connections; i++) {
        Connection control = tcp.connect(new InetSocketAddress("127.0.0.1", controlPort),
            new ConnectionOptions(null, timeout, "fuzzed-client"));
        RdmaSetupAck ack = new RdmaSetupAck(1, hostilePort, new byte[RdmaSetupAck.TOKEN_BYTES], 16, 16 << 10);
        String outcome;
        try (RdmaConnection c = RdmaConnection.open(control, ack, true, verbs, timeout, allocator, threads)) {
          if (i % 2 == 0) {
            ByteBuffer dst = ByteBuffer.allocateDirect(4096);
            c.read(new ReadRequest(1, "f", 0, 4096), dst).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
          } else {
            c.readBlock(new ShuffleRead(1, ShuffleBlockId.of(1, 2, 5), 0, 4096, FileVersion.ANY),
                a -> ByteBuffer.allocate(a.length())).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
          }
          System.out.println("connection " + i + ": a read from the hostile server succeeded");
          System.exit(2);
          return;
        } catch (Exception e) {
          outcome = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        System.out.println("connection " + i + " refused: " + outcome);
      }
      allocator.assertNoLeaks();
    }
    System.out.println("survived " + connections);
    System.out.flush();
    System.exit(0);
  }
}
