package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.transport.PartitionChecksumMismatchException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection that brought a corrupt answer is retired (ConnectionSlots.retire): closed once its
 * answers are in, not after the request timeout. Before, a map output whose Spark checksums fail
 * left a connection open on its server per mismatch for that long (120 s by default): a burst of
 * them, a rotten map output fetched again and again, filled the server's connection limit
 * (ShuffleDirectorySwapRaceTest had to raise it), and healthy reducers were refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RetiredConnectionsTest {
  private static final byte[] SECRET = "retired-connections".getBytes();
  private static final int STREAMS = 2;
  private static final int FETCHES = 15;

  @Test
  void aBurstOfChecksumMismatchesLeavesNoConnectionOpenPerMismatch(@TempDir Path dir) throws Exception {
    SparkShuffleLayout layout = new SparkShuffleLayout(List.of(dir.resolve("blockmgr-a")), 64);
    Files.createDirectories(layout.localDirs().get(0));
    byte[][] parts = partitions(3, 5000);
    layout.write(1, 1, parts);
    // A checksum file that lies: every answer fails Spark's checksum at the reducer.
    layout.writeChecksums(1, 1, "ADLER32", 1, 2, 3);
    layout.writeWithChecksums(1, 2, "ADLER32", java.util.zip.Adler32::new, parts);
    ClientConfig config = ClientConfig.builder().secret(SECRET).transport("tcp").streams(STREAMS).maxRetries(2)
        .retryBackoff(Duration.ofMillis(5)).requestTimeout(Duration.ofSeconds(60)).build();
    try (BlockServer server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64)
            .shuffleChecksums(ChecksumAlgorithm.ADLER32).secret(SECRET).port(0).build().start();
        BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), config)) {
      for (int i = 0; i < FETCHES; i++) {
        CompletionException e = assertThrows(CompletionException.class,
            () -> fetch(client, ShuffleBlockId.of(1, 1, 1)));
        assertTrue(causes(e).stream().anyMatch(PartitionChecksumMismatchException.class::isInstance),
            causes(e).toString());
      }
      // Three tries each: 45 connections retired, each before its next one was made.
      long limit = STREAMS + 2;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      while (server.stats().connectionsActive() > limit && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(server.stats().connectionsActive() <= limit, "the server still holds "
          + server.stats().connectionsActive() + " connections of one client of " + STREAMS
          + " streams after " + FETCHES + " fetches of a block whose checksum fails");
      // The client goes on over new connections.
      assertArrayEquals(parts[1], fetch(client, ShuffleBlockId.of(1, 2, 1)));
    }
  }

  private static byte[][] partitions(int count, int size) {
    Random random = new Random(11);
    byte[][] p = new byte[count][size];
    for (byte[] b : p) {
      random.nextBytes(b);
    }
    return p;
  }

  private static byte[] fetch(BlockClient c, ShuffleBlockId block) {
    ByteBuffer[] got = new ByteBuffer[1];
    c.readShuffleBlock(block, a -> got[0] = ByteBuffer.allocateDirect(a.length())).join();
    ByteBuffer b = got[0].flip();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  private static List<Throwable> causes(Throwable t) {
    List<Throwable> out = new java.util.ArrayList<>();
    for (Throwable c = t; c != null && !out.contains(c); c = c.getCause()) {
      out.add(c);
    }
    return out;
  }
}
