package io.gpudirect.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.TransportSelector;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import io.gpudirect.verbs.MemoryRegion;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 3 GiB read into one destination, as a GPU column larger than 2 GiB would be: the client
 * registers it as two regions ({@code ibv_mr.length} is an int), cuts the read so no request
 * straddles them, and the server RDMA-writes every byte. The destination is the verbs
 * double's virtual memory (a TEST DOUBLE: addresses with no memory behind them; each write is
 * checked and recorded as a CRC32C), so 3 GiB need not be allocated; the file is sparse with
 * random bytes where the pieces meet.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RdmaLargeReadTest {
  private static final long SIZE = 3L << 30;

  @TempDir Path root;

  @Test
  void aThreeGibReadIsSplitOverRegistrationsAndEveryByteLands() throws Exception {
    Path file = root.resolve("big.bin");
    long boundary = MemoryRegion.MAX_LENGTH;
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(SIZE);
      Random random = new Random(5);
      for (long at : new long[] {0, (1L << 30) - 5000, boundary - 70_000, boundary + 12_345, SIZE - 100_000}) {
        byte[] patch = new byte[100_000];
        random.nextBytes(patch);
        raf.seek(at);
        raf.write(patch);
      }
    }
    LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
    LoopbackVerbsDouble.VirtualMemory gpu = verbs.virtualMemory(SIZE);
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
        .verbs(() -> verbs).build().start();
        BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
            ClientConfig.builder().transport("rdma").streams(2).build(),
            new TransportSelector(() -> verbs))) {
      assertEquals("rdma", client.transport());
      assertTrue(client.readIntoDevice("big.bin", client.stat("big.bin").version(), 0, gpu.address(), SIZE));
      assertEquals(SIZE, verbs.bytesWritten());
    }
    verifyAgainstFile(gpu.writes(), file);
    assertEquals(0, verbs.liveRegions(), "registrations closed with the client and server");
  }

  /** The writes tile [0, SIZE) exactly, and each one's CRC32C is the file's at that place. */
  private static void verifyAgainstFile(Map<Long, long[]> writes, Path file) throws IOException {
    ByteBuffer buf = ByteBuffer.allocateDirect(4 << 20);
    long expectedOffset = 0;
    try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
      for (Map.Entry<Long, long[]> w : writes.entrySet()) {
        assertEquals(expectedOffset, (long) w.getKey(), "writes leave no gap and do not overlap");
        int len = (int) w.getValue()[0];
        buf.clear().limit(len);
        while (buf.hasRemaining()) {
          fc.read(buf, w.getKey() + buf.position());
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.flip());
        assertEquals(crc.getValue(), w.getValue()[1], "bytes at offset " + w.getKey());
        expectedOffset += len;
      }
    }
    assertEquals(SIZE, expectedOffset);
  }
}
