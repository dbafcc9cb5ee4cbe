package io.gpudirect.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Table;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.gpu.GpuReadFixture;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestData;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * cuDF decodes Parquet that gpudirect fetched straight into device memory, and gets exactly
 * what it gets from the local file. Malformed files fail in cuDF's own words and leave CUDA
 * usable. Nothing pinned is left over.
 */
@GpuTest
class RemoteFileDataSourceGpuTest {
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
    return list("parquet");
  }

  static Stream<String> malformed() throws Exception {
    return list("malformed").filter(n -> n.endsWith(".parquet"));
  }

  private static Stream<String> list(String dir) throws Exception {
    Path d = TestData.root().resolve(dir);
    try (Stream<Path> s = Files.list(d)) {
      List<String> names = s.map(p -> dir + "/" + p.getFileName()).filter(n -> n.endsWith(".parquet")).sorted().toList();
      return names.stream();
    }
  }

  @ParameterizedTest
  @MethodSource("parquet")
  void decodesOnTheGpuAsFromTheLocalFile(String path) throws Exception {
    Table expected;
    try {
      expected = Table.readParquet(ParquetOptions.DEFAULT, testdata.resolve(path).toFile());
    } catch (RuntimeException cudfRefusesTheFile) {
      assertRemoteRefusedToo(path, cudfRefusesTheFile);
      return;
    }
    try (Table local = expected; Table remote = Table.readParquet(ParquetOptions.DEFAULT, source(path))) {
      CudfTables.assertSameValues(local, remote, path);
    }
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void malformedFilesFailCleanlyAndCudaStaysUsable(String path) throws Exception {
    Table local = null;
    RuntimeException localFailure = null;
    try {
      local = Table.readParquet(ParquetOptions.DEFAULT, testdata.resolve(path).toFile());
    } catch (RuntimeException e) {
      localFailure = e;
    }
    if (localFailure != null) {
      assertRemoteRefusedToo(path, localFailure);
    } else {
      try (Table l = local; Table remote = Table.readParquet(ParquetOptions.DEFAULT, source(path))) {
        CudfTables.assertSameValues(l, remote, path);
      }
    }
    try (ai.rapids.cudf.DeviceMemoryBuffer probe = gpu.device().allocate(1 << 20, "probe");
         ai.rapids.cudf.DeviceMemoryBuffer head = probe.slice(0, 16);
         ai.rapids.cudf.HostMemoryBuffer back = ai.rapids.cudf.HostMemoryBuffer.allocate(16)) {
      // A sticky CUDA error would fail this allocation and copy.
      back.copyFromDeviceBuffer(head);
    }
      }

  private static void assertRemoteRefusedToo(String path, RuntimeException local) throws Exception {
    try (Table remote = Table.readParquet(ParquetOptions.DEFAULT, source(path))) {
      throw new AssertionError(path + ": cuDF refuses the local file (" + local.getMessage()
          + ") but read the remote one into " + remote.getRowCount() + " rows");
    } catch (RuntimeException remote) {
      assertTrue(remote.getClass().equals(local.getClass()),
          path + ": local " + local + " but remote " + remote);
    }
  }

  /**
   * The same source under cuDF's other readers: ORC, CSV and JSON Lines files written here
   * (the shared test data has none) decode on the GPU from the server exactly as from the
   * local file, with the device reads going through the pinned chunks.
   */
  @Test
  void orcCsvAndJsonDecodeOnTheGpuAsFromTheLocalFile(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    int rows = 50_000;
    StringBuilder csv = new StringBuilder("id,zone,amount\n");
    StringBuilder json = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      String zone = i % 17 == 0 ? "" : "zone-" + (i % 263);
      csv.append(i).append(',').append(zone).append(',').append(i * 0.25).append('\n');
      json.append("{\"id\":").append(i).append(",\"zone\":\"").append(zone).append("\",\"amount\":")
          .append(i * 0.25).append("}\n");
    }
    java.nio.file.Files.writeString(dir.resolve("t.csv"), csv);
    java.nio.file.Files.writeString(dir.resolve("t.jsonl"), json);
    ai.rapids.cudf.Schema schema = ai.rapids.cudf.Schema.builder().column(ai.rapids.cudf.DType.INT64, "id")
        .column(ai.rapids.cudf.DType.STRING, "zone").column(ai.rapids.cudf.DType.FLOAT64, "amount").build();
    try (Table t = Table.readCSV(schema, ai.rapids.cudf.CSVOptions.builder().hasHeader().build(), dir.resolve("t.csv").toFile());
         ai.rapids.cudf.TableWriter w = Table.writeORCChunked(ai.rapids.cudf.ORCWriterOptions.builder()
             .withColumns(true, "id", "zone", "amount").build(), dir.resolve("t.orc").toFile())) {
      w.write(t);
    }
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start();
         BlockClient ownClient = BlockClient.connect(new InetSocketAddress("127.0.0.1", own.port()), ClientConfig.defaults())) {
      ai.rapids.cudf.CSVOptions csvOptions = ai.rapids.cudf.CSVOptions.builder().hasHeader().build();
      ai.rapids.cudf.JSONOptions jsonOptions = ai.rapids.cudf.JSONOptions.builder().withLines(true).build();
      try (Table local = Table.readCSV(schema, csvOptions, dir.resolve("t.csv").toFile());
           Table remote = Table.readCSV(schema, csvOptions, source(ownClient, "t.csv"))) {
        assertEquals(rows, remote.getRowCount());
        CudfTables.assertSameValues(local, remote, "t.csv");
      }
      try (Table local = Table.readJSON(schema, jsonOptions, dir.resolve("t.jsonl").toFile());
           Table remote = Table.readJSON(schema, jsonOptions, source(ownClient, "t.jsonl"))) {
        assertEquals(rows, remote.getRowCount());
        CudfTables.assertSameValues(local, remote, "t.jsonl");
      }
      try (Table local = Table.readORC(ai.rapids.cudf.ORCOptions.DEFAULT, dir.resolve("t.orc").toFile());
           Table remote = Table.readORC(ai.rapids.cudf.ORCOptions.DEFAULT, source(ownClient, "t.orc"))) {
        assertEquals(rows, remote.getRowCount());
        CudfTables.assertSameValues(local, remote, "t.orc");
      }
    }
  }

  /**
   * Device reads have the GPU check each chunk's CRC32C where it landed. A clean read passes
   * that check chunk by chunk (one read each, none again); a byte flipped on the wire reaches
   * device memory, is caught there, and the chunk comes again, checked on the CPU, where the
   * store retries it on a new connection: the device ends up with the file's bytes.
   */
  @Test
  void theGpuChecksEachChunkWhereItLandedAndACorruptOneComesAgain(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    assertTrue(gpu.engine().checksumsOnDevice(), "the CRC32C kernel loads on this GPU");
    int length = 3 * 1024 * 1024 + 77;
    byte[] file = new byte[length];
    new java.util.Random(7).nextBytes(file);
    Files.write(dir.resolve("r.bin"), file);
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start()) {
      try (BlockClient clean = BlockClient.connect(new InetSocketAddress("127.0.0.1", own.port()), ClientConfig.defaults())) {
        assertSameBytes(file, deviceRead(source(clean, "r.bin"), 5, length - 5), 5);
        assertEquals((length - 5 + 64 * 1024 - 1) / (64 * 1024), clean.stats().reads(),
            "one read per 64 KiB chunk: the GPU found every CRC32C right");
      }
      // The first connection flips a byte every 200 kB past 300 kB: so does any retry on it.
      try (io.gpudirect.testing.LoopbackCutter bad = new io.gpudirect.testing.LoopbackCutter(own.port(), 300_000, 1)
               .corruptInsteadOfClose(200_000);
          BlockClient client = BlockClient.connect(new InetSocketAddress("127.0.0.1", bad.port()),
              ClientConfig.builder().streams(1).build())) {
        assertSameBytes(file, deviceRead(source(client, "r.bin"), 0, length), 0);
        assertTrue(bad.faultsInjected() >= 1, "no byte was flipped");
        assertTrue(client.stats().reads() > (length + 64 * 1024 - 1) / (64 * 1024),
            "the corrupt chunks came again");
      }
    }
  }

  /**
   * What cuDF's reads fetch is counted on the source, for the scan's task metrics: bytes as
   * fetched (clamped at the end of the file) and a wait for each read, host and device alike.
   */
  @Test
  void readsAreCountedAsFetched() throws Exception {
    String path = "parquet/alltypes_plain.parquet";
    byte[] file = Files.readAllBytes(testdata.resolve(path));
    try (RemoteFileDataSource source = source(path)) {
      assertEquals(0, source.fetchedBytes());
      try (ai.rapids.cudf.HostMemoryBuffer footer = source.hostRead(file.length - 8, 8)) {
        assertEquals(8, footer.getLength());
      }
      try (ai.rapids.cudf.HostMemoryBuffer dest = ai.rapids.cudf.HostMemoryBuffer.allocate(100)) {
        // 100 bytes asked for 40 before the end: 40 are fetched.
        assertEquals(40, source.hostRead(file.length - 40, dest));
      }
      assertEquals(48, source.fetchedBytes());
      deviceRead(source, 0, file.length);
      assertEquals(48 + file.length, source.fetchedBytes());
      assertTrue(source.fetchNanos() > 0);
    }
  }

  /**
   * Several ranges read at once land back to back in one buffer, each exactly the file's bytes
   * (a range smaller than a chunk, one of several chunks, one ending at the file's end), and are
   * counted as fetched; a range past the end is refused before anything is read.
   */
  @Test
  void severalRangesLandBackToBack(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    int length = 1024 * 1024 + 123;
    byte[] file = new byte[length];
    new java.util.Random(11).nextBytes(file);
    Files.write(dir.resolve("r.bin"), file);
    long[] ranges = {7, 1000, 5000, 3 * 64 * 1024 + 5, length - 70_000, 70_000};
    int total = 1000 + 3 * 64 * 1024 + 5 + 70_000;
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start();
         BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", own.port()), ClientConfig.defaults());
         RemoteFileDataSource source = source(c, "r.bin");
         ai.rapids.cudf.DeviceMemoryBuffer d = gpu.device().allocate(total, "ranges");
         ai.rapids.cudf.HostMemoryBuffer h = ai.rapids.cudf.HostMemoryBuffer.allocate(total)) {
      source.deviceReadRanges(ranges, d);
      assertEquals(total, source.fetchedBytes());
      h.copyFromDeviceBuffer(d);
      byte[] got = new byte[total];
      h.getBytes(got, 0, 0, total);
      java.io.ByteArrayOutputStream want = new java.io.ByteArrayOutputStream();
      for (int i = 0; i < ranges.length; i += 2) {
        want.write(file, (int) ranges[i], (int) ranges[i + 1]);
      }
      org.junit.jupiter.api.Assertions.assertArrayEquals(want.toByteArray(), got);
      RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
          () -> source.deviceReadRanges(new long[] {0, 10, length - 5, 10}, d));
      assertTrue(e.getMessage().contains("r.bin") && e.getMessage().contains("end of the file"), e.getMessage());
      assertEquals(total, source.fetchedBytes(), "the refused read fetched nothing");
    }
  }

  private static byte[] deviceRead(RemoteFileDataSource source, long offset, int length) {
    try (ai.rapids.cudf.DeviceMemoryBuffer d = gpu.device().allocate(length, "device read of " + length + " bytes");
         ai.rapids.cudf.HostMemoryBuffer h = ai.rapids.cudf.HostMemoryBuffer.allocate(length)) {
      long counted = source.fetchedBytes();
      assertEquals(length, source.deviceRead(offset, d, ai.rapids.cudf.Cuda.DEFAULT_STREAM));
      // The scan's "bytes fetched" metric comes from here on the GPU path.
      assertEquals(counted + length, source.fetchedBytes(), "a device read is counted as fetched");
      h.copyFromDeviceBuffer(d);
      byte[] out = new byte[length];
      h.getBytes(out, 0, 0, length);
      return out;
    }
  }

  private static void assertSameBytes(byte[] file, byte[] got, int offset) {
    org.junit.jupiter.api.Assertions.assertArrayEquals(
        java.util.Arrays.copyOfRange(file, offset, offset + got.length), got);
  }

  private static RemoteFileDataSource source(BlockClient c, String path) {
    FileEntry e = c.stat(path);
    return new RemoteFileDataSource(c, path, e.version(), e.length(), gpu.pool(), gpu.engine());
  }

  private static RemoteFileDataSource source(String path) {
    FileEntry e = client.stat(path);
    return new RemoteFileDataSource(client, path, e.version(), e.length(), gpu.pool(), gpu.engine());
  }

}
