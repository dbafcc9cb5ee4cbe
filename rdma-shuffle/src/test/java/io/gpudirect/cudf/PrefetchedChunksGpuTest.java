package io.gpudirect.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.DataSource;
import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Table;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.FileChangedException;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.gpu.GpuReadFixture;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestData;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Parquet file whose column chunks were fetched into device memory before cuDF decodes it:
 * the decode gives what the local file gives, its device reads inside the fetched ranges fetch
 * nothing more, reads outside them still come from the server, a full allocator means no
 * fetch ahead rather than a failure, and nothing is left charged or pinned.
 */
@GpuTest
class PrefetchedChunksGpuTest {
  @RegisterExtension
  static final GpuReadFixture gpu = GpuReadFixture.chunksOf(64 * 1024);
  private static Path testdata;
  private static BlockServer server;
  private static BlockClient client;

  @BeforeAll
  static void start() {
    testdata = TestData.root();
    server = BlockServer.builder().root(testdata).port(0).build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), ClientConfig.defaults());
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static Stream<String> parquet() throws Exception {
    try (Stream<Path> s = Files.list(TestData.root().resolve("parquet"))) {
      return s.map(p -> "parquet/" + p.getFileName()).filter(n -> n.endsWith(".parquet")).sorted().toList().stream();
    }
  }

  /**
   * Every page lies between the leading magic and the footer: fetched ahead as one range,
   * cuDF's device reads are all served from device memory, and the server is asked only for
   * what cuDF reads on the host: the leading magic, the footer's length and the footer.
   */
  @ParameterizedTest
  @MethodSource("parquet")
  void decodesAsTheLocalFileWithItsPagesFetchedAhead(String path) throws Exception {
    long footer = footerLength(testdata.resolve(path));
    long pagesEnd = Files.size(testdata.resolve(path)) - 8 - footer;
    long more = decodeFetchedAhead(path, new long[] {4, pagesEnd - 4}, pagesEnd - 4);
    if (more >= 0) {
      assertEquals(4 + 8 + footer, more, path + ": after the fetch ahead only the leading magic and the footer come"
          + " from the server");
    }
  }

  /**
   * Cut in two in the middle, reads across the cut (a column chunk lying across it) go to the
   * server, and the decode is still the local file's.
   */
  @ParameterizedTest
  @MethodSource("parquet")
  void readsOutsideTheFetchedRangesStillComeFromTheServer(String path) throws Exception {
    long footer = footerLength(testdata.resolve(path));
    long pagesEnd = Files.size(testdata.resolve(path)) - 8 - footer;
    long cut = 4 + (pagesEnd - 4) / 2;
    long more = decodeFetchedAhead(path, new long[] {4, cut - 4 - 1, cut, pagesEnd - cut}, pagesEnd - 5);
    if (more >= 0) {
      assertTrue(more >= 8 + footer, path + ": " + more + " bytes fetched after the fetch ahead");
    }
  }

  /**
   * Decodes {@code path} with {@code ranges} fetched ahead and checks it against the local
   * file; returns the bytes fetched after the fetch ahead, or -1 where cuDF refuses the file
   * (RemoteFileDataSourceGpuTest checks that the remote file is refused alike).
   */
  private static long decodeFetchedAhead(String path, long[] ranges, long rangeBytes) throws Exception {
    Table expected;
    try {
      expected = Table.readParquet(ParquetOptions.DEFAULT, testdata.resolve(path).toFile());
    } catch (RuntimeException cudfRefusesTheFile) {
      return -1;
    }
    RemoteFileDataSource file = source(path);
    try (Table local = expected; DataSource ahead = PrefetchedChunks.fetch(file, ranges, gpu.prefetch(), "pages of " + path)) {
      assertEquals(rangeBytes, file.fetchedBytes(), "the ranges were fetched ahead, nothing else");
      assertTrue(gpu.prefetch().accounts().outstandingBytes() >= rangeBytes, "the fetched bytes are charged");
      try (Table remote = Table.readParquet(ParquetOptions.DEFAULT, ahead)) {
        CudfTables.assertSameValues(local, remote, path);
      }
      return file.fetchedBytes() - rangeBytes;
    }
  }

  @Test
  void aFullAllocatorMeansNoFetchAheadRatherThanAFailure() {
    String path = "parquet/alltypes_plain.parquet";
    RemoteFileDataSource file = source(path);
    try (BufferAllocator tiny = gpu.prefetch().accounts().newChildAllocator("tiny", 16);
         DataSource same = PrefetchedChunks.fetch(file, new long[] {4, file.size() - 4}, new DeviceAllocator(tiny), path)) {
      assertSame(file, same, "too large for the allocator: the file itself, to read as it decodes");
      assertEquals(0, file.fetchedBytes(), "nothing was fetched");
    }
  }

  @Test
  void aRangePastTheEndIsRefusedNamingTheFileAndNothingIsKept() {
    String path = "parquet/alltypes_plain.parquet";
    RemoteFileDataSource file = source(path);
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> PrefetchedChunks.fetch(file, new long[] {4, 100, file.size() - 10, 20}, gpu.prefetch(), path));
    assertTrue(e.getMessage().contains(path) && e.getMessage().contains("end of the file"), e.getMessage());
  }

  /** A file changed after its version was taken fails the fetch ahead, as it fails any read. */
  @Test
  void aFileChangedSinceItsVersionFailsTheFetch(@TempDir Path dir) throws Exception {
    Path p = dir.resolve("f.bin");
    Files.write(p, new byte[1 << 20]);
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start();
         BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", own.port()), ClientConfig.defaults())) {
      FileEntry e = c.stat("f.bin");
      Files.write(p, new byte[2 << 20]);
      RemoteFileDataSource file = new RemoteFileDataSource(c, "f.bin", e.version(), e.length(), gpu.pool(), gpu.engine());
      Throwable t = assertThrows(RuntimeException.class,
          () -> PrefetchedChunks.fetch(file, new long[] {0, 4096, 8192, 65536}, gpu.prefetch(), "f.bin"));
      while (t.getCause() != null && !(t instanceof FileChangedException)) {
        t = t.getCause();
      }
      assertTrue(t instanceof FileChangedException, "a changed file is named as changed: " + t);
    }
  }

  private static long footerLength(Path file) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      byte[] end = new byte[8];
      f.seek(f.length() - 8);
      f.readFully(end);
      return ByteBuffer.wrap(end, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL;
    }
  }

  private static RemoteFileDataSource source(String path) {
    FileEntry e = client.stat(path);
    return new RemoteFileDataSource(client, path, e.version(), e.length(), gpu.pool(), gpu.engine());
  }
}
