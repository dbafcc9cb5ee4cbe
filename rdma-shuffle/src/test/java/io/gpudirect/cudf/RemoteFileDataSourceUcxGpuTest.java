package io.gpudirect.cudf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.ParquetOptions;
import ai.rapids.cudf.Table;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.TransportSelector;
import io.gpudirect.gpu.GpuReadFixture;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.testing.TestData;
import io.gpudirect.verbs.provider.RdmaProvider;
import io.gpudirect.verbs.ucx.UcxLibrary;
import io.gpudirect.verbs.ucx.UcxVerbs;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Parquet and Arrow IPC files read into device memory over real UCX (transport=rdma, the
 * server serving --rdma on over UCX). A UCX without CUDA transports (Ubuntu's, on the H200)
 * cannot map GPU memory, so the bytes come over UCX into pinned host chunks, are copied to
 * the GPU, and the GPU checks each chunk's CRC32C where it landed; a UCX with CUDA puts them
 * straight into device memory. Either way cuDF decodes what it decodes from the local file,
 * and the device holds the file's bytes.
 */
@GpuTest
class RemoteFileDataSourceUcxGpuTest {
  private static final int CHUNK = 64 * 1024;
  @RegisterExtension
  static final GpuReadFixture gpu = GpuReadFixture.chunksOf(CHUNK);
  private static Path testdata;
  private static BlockServer server;
  private static BlockClient client;

  @BeforeAll
  static void start() {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "skipped: UCX is not installed (apt-get install libucx0): " + missing);
    testdata = TestData.root();
    server = BlockServer.builder().root(testdata).port(0).rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX)
        .build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().transport("rdma").build(), TransportSelector.of(RdmaProvider.UCX));
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

  @AfterEach
  void theBytesWentOverUcx() {
    assertTrue(client.transport().startsWith("ucx:"), client.transport() + ": " + client.transportReason());
  }

  static Stream<String> parquet() throws Exception {
    return list("parquet", ".parquet");
  }

  static Stream<String> arrow() throws Exception {
    return list("arrow", ".arrow_file");
  }

  private static Stream<String> list(String dir, String suffix) throws Exception {
    try (Stream<Path> s = Files.list(TestData.root().resolve(dir))) {
      return s.map(p -> dir + "/" + p.getFileName()).filter(n -> n.endsWith(suffix)).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("parquet")
  void parquetDecodesOnTheGpuAsFromTheLocalFile(String path) throws Exception {
    Table expected;
    try {
      expected = Table.readParquet(ParquetOptions.DEFAULT, testdata.resolve(path).toFile());
    } catch (RuntimeException cudfRefusesTheFile) {
      return; // RemoteFileDataSourceGpuTest covers refusals; here the bytes' route is the point
    }
    try (Table local = expected; Table remote = Table.readParquet(ParquetOptions.DEFAULT, source(path))) {
      CudfTables.assertSameValues(local, remote, path);
    }
  }

  @ParameterizedTest
  @MethodSource("arrow")
  void arrowIpcFilesLandInDeviceMemoryCheckedByTheGpu(String path) throws Exception {
    byte[] file = Files.readAllBytes(testdata.resolve(path));
    long readsBefore = client.stats().reads();
    byte[] got = deviceRead(source(path), file.length);
    assertArrayEquals(file, got, path);
    if (!UcxVerbs.open().cudaMemory()) {
      assertTrue(gpu.engine().checksumsOnDevice(), "the CRC32C kernel loads on this GPU");
      assertTrue(client.transportReason().contains("cannot map GPU memory"), client.transportReason());
      // One read per chunk: the GPU found every chunk's CRC32C right, none came again.
      assertEquals((file.length + CHUNK - 1) / CHUNK, client.stats().reads() - readsBefore, path);
    }
  }

  private static byte[] deviceRead(RemoteFileDataSource source, int length) {
    try (ai.rapids.cudf.DeviceMemoryBuffer d = ai.rapids.cudf.DeviceMemoryBuffer.allocate(length);
         ai.rapids.cudf.HostMemoryBuffer h = ai.rapids.cudf.HostMemoryBuffer.allocate(length)) {
      assertEquals(length, source.deviceRead(0, d, ai.rapids.cudf.Cuda.DEFAULT_STREAM));
      h.copyFromDeviceBuffer(d);
      byte[] out = new byte[length];
      h.getBytes(out, 0, 0, length);
      return out;
    }
  }

  private static RemoteFileDataSource source(String path) {
    FileEntry e = client.stat(path);
    return new RemoteFileDataSource(client, path, e.version(), e.length(), gpu.pool(), gpu.engine());
  }
}
