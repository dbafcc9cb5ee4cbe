package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.RdmaBind;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleRead;
import io.gpudirect.testing.ChildProcess;
import io.gpudirect.testing.QueuePairOffer;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.rdma.RdmaConnection;
import io.gpudirect.transport.rdma.RdmaTransport;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile clients against a server's queue pairs, over real UCX, the server in a JVM of its own
 * ({@link UcxServerProcess}, with a secret): crafted and random frames from strangers that never
 * presented a token, and from peers that did (they logged in over TCP and bound a queue pair),
 * 100,000 frames and more. The server must stay up, and an authenticated reader must read the
 * right bytes over RDMA and TCP afterwards. Issue 28, attack 1: a stranger's key whose size bytes
 * send UCX past its buffer killed the server (SIGSEGV in ucp_ep_rkey_unpack_internal).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class HostileClientFuzzTest {
  private static final long SEED = 0x28_2026_12_05L;
  private static final byte[] SECRET = "the secret of HostileClientFuzzTest".getBytes();
  private static final ConnectionThreads THREADS = new ConnectionThreads();

  @TempDir static Path root;
  static ChildProcess server;
  static int port;
  static int rdmaPort;
  static byte[] data;
  /** Partition 2 of shuffle 1's map outputs. */
  static byte[] block;

  @BeforeAll
  static void start() throws Exception {
    RdmaOverUcxConformanceTest.needsUcx();
    Path files = Files.createDirectory(root.resolve("files"));
    data = TestFiles.write(files.resolve("d.bin"), 2 << 20, 11);
    Path secret = root.resolve("secret");
    Files.write(secret, SECRET);
    // Shuffle 1's map outputs 0 and 1 too, for the fuzz's RDMA_SHUFFLE_READs to find.
    SparkShuffleLayout shuffle = new SparkShuffleLayout(List.of(root.resolve("blockmgr-a")), 64);
    Files.createDirectories(shuffle.localDirs().get(0));
    block = java.util.Arrays.copyOf(data, 70_000);
    for (int map = 0; map < 2; map++) {
      shuffle.write(1, map, new byte[100], new byte[0], block, new byte[5], new byte[9000], new byte[1]);
    }
    server = ChildJvm.start(UcxServerProcess.class, files.toString(), secret.toString(),
        shuffle.localDirs().get(0).toString());
    port = Integer.parseInt(server.awaitLine("port ", Duration.ofSeconds(60)).substring(5).trim());
    try (QueuePairOffer o = QueuePairOffer.take(port, SECRET)) {
      rdmaPort = o.rdmaPort();
    }
  }

  @AfterAll
  static void stop() throws InterruptedException {
    THREADS.close();
    if (server != null) {
      server.close();
    }
  }

  private static HostileUcxClient stranger() {
    return new HostileUcxClient(new InetSocketAddress("127.0.0.1", rdmaPort));
  }

  /**
   * Strangers are endpoints on this JVM's one UCX worker, as every endpoint is. A worker each, made and
   * closed hundreds of times, aborted this JVM in CI: UCX before 1.18 handed an event of a closed
   * worker's socket to another worker's (async.c: Assertion `handler->async == async' failed).
   */
  @Test
  void strangersAreEndpointsOfOneWorker() throws Exception {
    try (HostileUcxClient first = stranger()) {
      int workers = WorkerLoop.open();
      try (HostileUcxClient second = stranger(); HostileUcxClient third = stranger()) {
        assertEquals(workers, WorkerLoop.open(), "UCX workers open in this JVM with three strangers connected");
      }
    }
  }

  /**
   * Strangers that connect, send a frame and drop at once, from two threads: UCX before 1.18 can
   * hand a dropped socket's late event to the next socket given its number (docs/security.md).
   * The server's one worker must take it and serve.
   */
  @Test
  void theServerSurvivesStrangersThatConnectAndDropFast() throws Exception {
    int strangers = Integer.getInteger("gpudirect.test.churn", 2_000);
    java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
    long connected = HostileUcxClient.flood(new InetSocketAddress("127.0.0.1", rdmaPort),
        () -> tries.getAndIncrement() < strangers && server.isAlive());
    assertTrue(connected >= strangers * 9 / 10, "strangers that connected: " + connected);
    assertServes();
  }

  @Test
  void anExplodingKeyFromAStrangerClosesItsQueuePairNotTheServer() throws Exception {
    ByteBuffer key = UcxFrames.rkey(1, 0x1000, 4096, 0, UcxFrames.explodingKey());
    for (int i = 0; i < 5; i++) {
      try (HostileUcxClient c = stranger()) {
        // As the attack sent them: in a loop, until the server closes the queue pair.
        for (int f = 0; f < 1000 && c.send(key.duplicate()); f++) {
          assertTrue(server.isAlive(), server.describe());
        }
        assertTrue(c.closedByServerWithin(Duration.ofSeconds(20)), "queue pair " + i + " closed; " + server.describe());
      }
    }
    assertServes();
  }

  @Test
  void theServerSurvivesAHundredThousandFramesBeforeAndAfterTheToken() throws Exception {
    long frames = 0;
    for (int i = 0; i < 300; i++) {
      ControlStreamFuzz fuzz = new ControlStreamFuzz(SEED + i);
      try (HostileUcxClient c = stranger()) {
        int n = 1 + fuzz.nextInt(3);
        for (int f = 0; f < n && c.send(fuzz.nextInt(2) == 0 ? fuzz.breaker() : fuzz.accepted(1).get(0)); f++) {
          frames++;
        }
      }
    }
    assertTrue(server.isAlive(), server.describe());
    for (int i = 0; i < 100; i++) {
      ControlStreamFuzz fuzz = new ControlStreamFuzz(SEED + 1000 + i);
      try (QueuePairOffer offer = QueuePairOffer.take(port, SECRET);
          HostileUcxClient c = stranger()) {
        c.send(UcxFrames.send(Frames.encode(new RdmaBind(offer.ack.token()))));
        assertNotNull(c.receive(8 + Frames.encode(new io.gpudirect.protocol.RdmaBound()).remaining(),
            Duration.ofSeconds(10)), "RDMA_BOUND for queue pair " + i + "; " + server.describe());
        List<ByteBuffer> accepted = fuzz.accepted(900 + fuzz.nextInt(200));
        c.send(concat(accepted));
        frames += accepted.size();
        if (c.send(fuzz.breaker())) {
          frames++;
        }
      }
    }
    assertTrue(frames >= 100_000, "frames: " + frames);
    assertServes();
  }

  /** The server is up and serves an authenticated reader the right bytes, over RDMA and TCP. */
  private static void assertServes() throws Exception {
    assertTrue(server.isAlive(), server.describe());
    ConnectionOptions options = new ConnectionOptions(SECRET, Duration.ofSeconds(10), "hostile-client-fuzz-test");
    SecretHoldersRead.assertReadsOverRdma(port, options, THREADS, "d.bin", data, Duration.ofSeconds(30));
    try (RdmaConnection c = new RdmaTransport(UcxVerbs.open(), THREADS).connect(
        new InetSocketAddress("127.0.0.1", port), options)) {
      ByteBuffer window = ByteBuffer.allocate(block.length);
      c.readBlock(new ShuffleRead(2, ShuffleBlockId.of(1, 1, 2), 0, 1 << 20, FileVersion.ANY), a -> window)
          .get(30, TimeUnit.SECONDS);
      assertArrayEquals(block, window.array(), "shuffle block over RDMA after the attack");
    }
    try (BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", port),
        ClientConfig.builder().secret(SECRET).build())) {
      ByteBuffer dst = ByteBuffer.allocate(data.length);
      c.read("d.bin", 0, dst);
      assertArrayEquals(data, dst.array(), "TCP read after the attack");
    }
  }

  private static ByteBuffer concat(List<ByteBuffer> frames) {
    int n = frames.stream().mapToInt(ByteBuffer::remaining).sum();
    ByteBuffer all = ByteBuffer.allocateDirect(n);
    frames.forEach(f -> all.put(f.duplicate()));
    return all.flip();
  }
}
