package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import ai.rapids.cudf.ColumnView;
import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.Table;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.remote.RemoteFileChannel;
import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Arrow IPC files and streams fetched over loopback into device memory and wrapped as cuDF columns give,
 * value for value, what Arrow Java's own reader gives on the local file. Columns of types
 * not read into cuDF yet are refused by name; malformed files fail before the GPU reads them.
 */
@Tag("gpu")
class CudfArrowIpcReaderGpuTest {
  private static Path testdata;
  private static BlockServer server;
  private static BlockClient client;

  @BeforeAll
  static void start() {
    assumeTrue(GpuEnvironment.get().gpu() && GpuEnvironment.get().cudf(),
        "skipped: needs a GPU and cuDF (" + GpuEnvironment.get().reason() + ")");
    testdata = Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata")).toAbsolutePath();
    server = BlockServer.builder().root(testdata).port(0).build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), ClientConfig.defaults());
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
      server.close();
    }
  }

  static Stream<String> files() throws IOException {
    try (Stream<Path> s = Files.list(Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata"), "arrow"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow_file") || n.endsWith(".stream")).sorted().toList().stream();
    }
  }

  static Stream<String> malformed() throws IOException {
    try (Stream<Path> s = Files.list(Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata"), "malformed"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow") || n.endsWith(".arrows")).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("files")
  void columnsEqualArrowJavasReading(String name) throws Exception {
    Path local = testdata.resolve("arrow").resolve(name);
    try (RootAllocator allocator = new RootAllocator();
         ArrowReader reference = stream(name) ? new ArrowStreamReader(FileChannel.open(local), allocator)
             : new ArrowFileReader(FileChannel.open(local), allocator)) {
      List<Field> fields = reference.getVectorSchemaRoot().getSchema().getFields();
      List<String> supported = new ArrayList<>();
      for (Field f : fields) {
        try {
          CudfTypeMapping.of(f, name);
          supported.add(f.getName());
        } catch (ArrowFormatException unsupported) {
          ArrowFormatException e = assertThrows(ArrowFormatException.class, () -> reader("arrow/" + name).read(f.getName()));
          assertTrue(e.getMessage().contains("'" + f.getName() + "'") && e.getMessage().contains(name), e.getMessage());
        }
      }
      if (supported.isEmpty() || name.startsWith("generated_primitive_no_batches")) {
        return;
      }
      try (Table table = reader("arrow/" + name).read(supported.toArray(new String[0]))) {
        long row = 0;
        while (reference.loadNextBatch()) {
          VectorSchemaRoot root = reference.getVectorSchemaRoot();
          for (int c = 0; c < supported.size(); c++) {
            assertSameValues(table.getColumn(c), row, root.getVector(supported.get(c)), name + " column " + supported.get(c));
          }
          row += root.getRowCount();
        }
        assertEquals(row, table.getRowCount(), "rows of " + name);
      }
    }
    assertEquals(0, GpuResources.shared().pool().chunksInUse());
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void malformedFilesFailBeforeTheGpuReadsThem(String name) {
    try (Table t = reader("malformed/" + name).read()) {
      assertTrue(t.getRowCount() >= 0);
    } catch (ArrowFormatException expected) {
      assertTrue(expected.getMessage().contains(name), expected.getMessage());
    }
    // No sticky CUDA error is left behind.
    try (Table probe = new Table(ai.rapids.cudf.ColumnVector.fromInts(1, 2, 3))) {
      assertEquals(3, probe.getRowCount());
    }
  }

  private static CudfArrowIpcReader reader(String path) {
    long size = client.stat(path).length();
    GpuResources gpu = GpuResources.shared();
    RemoteFileDataSource source = new RemoteFileDataSource(client, path, size, gpu.pool(), gpu.engine());
    return new CudfArrowIpcReader(new RemoteFileChannel(client, path, size), size, path, stream(path),
        (offset, dst) -> source.deviceRead(offset, dst, Cuda.DEFAULT_STREAM));
  }

  private static boolean stream(String name) {
    return name.endsWith(".stream") || name.endsWith(".arrows");
  }

  /** Rows [from, from + vector's count) of the cuDF column against an Arrow Java vector, raw values. */
  private static void assertSameValues(ColumnView column, long from, FieldVector vector, String what) {
    try (HostColumnVector host = column.copyToHost()) {
      DType type = host.getType();
      for (int i = 0; i < vector.getValueCount(); i++) {
        long r = from + i;
        String at = what + " row " + r;
        assertEquals(vector.isNull(i), host.isNull(r), at + " null");
        if (vector.isNull(i)) {
          continue;
        }
        if (type.equals(DType.BOOL8)) {
          assertEquals(((BitVector) vector).get(i) == 1, host.getBoolean(r), at);
        } else if (type.equals(DType.STRING)) {
          assertEquals(new String(((VarCharVector) vector).get(i), StandardCharsets.UTF_8), host.getJavaString(r), at);
        } else {
          int width = type.getSizeInBytes();
          var arrow = ((BaseFixedWidthVector) vector).getDataBuffer();
          for (int b = 0; b < width; b++) {
            assertEquals(arrow.getByte((long) i * width + b), host.getData().getByte(r * width + b), at + " byte " + b);
          }
        }
      }
    }
  }
}
