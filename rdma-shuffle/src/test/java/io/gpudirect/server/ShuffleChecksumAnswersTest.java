package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Spark's partition checksums save the server: a block whose map output has them is sent by
 * sendfile alone, its bytes never read into the server's memory for a CRC32C (none handed to the
 * checksum pool, no block checksum computed or looked up); one whose map output has none is
 * checksummed as before.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShuffleChecksumAnswersTest {
  private static final byte[] SECRET = "shuffle-checksum-answers".getBytes();

  @Test
  void aBlockWithSparksChecksumsIsNotReadASecondTime(@TempDir Path dir) throws IOException {
    SparkShuffleLayout layout = new SparkShuffleLayout(List.of(dir.resolve("blockmgr-a")), 64);
    Files.createDirectories(layout.localDirs().get(0));
    byte[][] parts = new byte[3][1 << 20];
    Random random = new Random(7);
    for (byte[] p : parts) {
      random.nextBytes(p);
    }
    layout.writeWithChecksums(1, 1, "ADLER32", java.util.zip.Adler32::new, parts);
    layout.write(1, 2, parts);
    for (long map = 1; map <= 2; map++) {
      // Settled: the server would cache its block checksums.
      Files.setLastModifiedTime(layout.data(1, map), FileTime.from(Instant.now().minusSeconds(60)));
    }
    try (BlockServer s = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64)
            .shuffleChecksums(ChecksumAlgorithm.ADLER32).secret(SECRET).port(0).build().start();
         BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
             ClientConfig.builder().secret(SECRET).build())) {
      assertEquals(3L << 20, fetch(c, new ShuffleBlockId(1, 1, 0, 3)));
      assertEquals(1L << 20, fetch(c, ShuffleBlockId.of(1, 1, 1)));
      assertEquals(0, s.context().checksums().tasks(), "no CRC32C computed on the pool");
      assertEquals(0, s.context().blockChecksums().misses() + s.context().blockChecksums().hits(),
          "nor from cached block checksums");

      assertEquals(3L << 20, fetch(c, new ShuffleBlockId(1, 2, 0, 3)));
      assertTrue(s.context().checksums().tasks() > 0, "a map output without checksums gets the server's CRC32C");
    }
  }

  private static long fetch(BlockClient c, ShuffleBlockId block) {
    return c.readShuffleBlock(block, a -> ByteBuffer.allocateDirect(a.length())).join();
  }
}
