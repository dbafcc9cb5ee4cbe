package io.gpudirect.arrow.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.HostColumnVectorCore;
import ai.rapids.cudf.Table;
import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.cudf.RemoteFileDataSource;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.memory.AllocationLimitException;
import io.gpudirect.remote.RemoteFileChannel;
import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Arrow IPC files and streams fetched over loopback into device memory and made into cuDF
 * columns give, value for value, what Arrow Java's own reader gives on the local file: every
 * case of {@link CudfCases} (the corpus as it is and compressed with LZ4_FRAME and ZSTD, and
 * binary, large, nested and dictionary-encoded types). Columns of types cuDF cannot hold are
 * refused by name; malformed files fail before the GPU reads them, or are read correctly.
 * Every device buffer a read made is given back once its table is closed, and a read that
 * needs more than its allocator's limit is refused.
 */
@GpuTest
class CudfArrowIpcReaderGpuTest {
  /** The server's root: the corpus copied in, and the generated cases written next to it. */
  @TempDir
  static Path served;

  private static BlockServer server;
  private static BlockClient client;
  private static RootAllocator allocator;

  @BeforeAll
  static void start() throws IOException {
    for (String dir : new String[] {"arrow", "malformed"}) {
      Files.createDirectories(served.resolve(dir));
      try (Stream<Path> s = Files.list(CudfCases.TESTDATA.resolve(dir))) {
        for (Path p : s.toList()) {
          Files.copy(p, served.resolve(dir).resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    allocator = new RootAllocator();
    server = BlockServer.builder().root(served).port(0).build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()), ClientConfig.defaults());
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
      server.close();
      allocator.close();
    }
  }

  static Stream<String> cases() throws IOException {
    return CudfCases.all();
  }

  static Stream<String> malformed() throws IOException {
    try (Stream<Path> s = Files.list(CudfCases.TESTDATA.resolve("malformed"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow") || n.endsWith(".arrows")).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void columnsEqualArrowJavasReading(String name) throws Exception {
    Path local = CudfCases.file(name, served.resolve("arrow"), allocator);
    String path = "arrow/" + local.getFileName();
    boolean stream = CudfCases.isStream(name);
    try (ArrowReader reference = CudfCases.reference(local, stream, allocator)) {
      List<Field> fields = reference.getVectorSchemaRoot().getSchema().getFields();
      List<String> supported = new ArrayList<>();
      for (Field f : fields) {
        try {
          CudfTypeMapping.of(f, name);
          supported.add(f.getName());
        } catch (ArrowFormatException unsupported) {
          ArrowFormatException e = assertThrows(ArrowFormatException.class, () -> reader(path, stream).read(f.getName()));
          assertTrue(e.getMessage().contains("'" + f.getName() + "'") && e.getMessage().contains(path), e.getMessage());
        }
      }
      if (supported.isEmpty()) {
        return;
      }
      Table read;
      try {
        read = reader(path, stream).read(supported.toArray(new String[0]));
      } catch (ArrowFormatException e) {
        // Refused as the host reader refuses it: only for a value Spark could not hold.
        assertTrue(e.getMessage().contains("more digits than its type") && e.getMessage().contains(path), e.getMessage());
        assertTrue(holdsDecimalWiderThanItsType(reference, supported), name + " was refused, but Arrow Java reads"
            + " no decimal with more digits than its type: " + e.getMessage());
        return;
      }
      try (Table table = read) {
        List<HostColumnVector> host = new ArrayList<>();
        try {
          for (int c = 0; c < supported.size(); c++) {
            host.add(table.getColumn(c).copyToHost());
          }
          long row = 0;
          while (reference.loadNextBatch()) {
            VectorSchemaRoot root = reference.getVectorSchemaRoot();
            for (int i = 0; i < root.getRowCount(); i++, row++) {
              for (int c = 0; c < supported.size(); c++) {
                assertEquals(ReferenceValues.value(root.getVector(supported.get(c)), i, reference),
                    cudfValue(host.get(c), row), name + " column " + supported.get(c) + " row " + row);
              }
            }
          }
          assertEquals(row, table.getRowCount(), "rows of " + name);
        } finally {
          host.forEach(HostColumnVector::close);
        }
      }
    }
    assertEquals(0, GpuResources.shared().pool().chunksInUse());
    assertEquals(0, GpuResources.shared().device().accounts().outstandingBytes(),
        "device bytes of " + name + " still charged after its table was closed");
  }

  private static boolean holdsDecimalWiderThanItsType(ArrowReader reference, List<String> columns) throws Exception {
    boolean wide = false;
    while (reference.loadNextBatch()) {
      for (String c : columns) {
        if (reference.getVectorSchemaRoot().getVector(c) instanceof org.apache.arrow.vector.DecimalVector v) {
          for (int i = 0; i < v.getValueCount(); i++) {
            wide |= !v.isNull(i) && v.getObject(i).precision() > v.getPrecision();
          }
        }
      }
    }
    return wide;
  }

  /**
   * A read whose bodies would take its device allocator past the limit fails before it
   * allocates, saying which allocator and which file, and leaves nothing charged or lent.
   */
  @Test
  void aReadPastTheDeviceLimitIsRefusedNamingTheAllocatorAndTheFile() throws IOException {
    String path = "arrow/generated_primitive.arrow_file";
    // Every body is allocated with 64 bytes of slack past its end, so no body fits in 64.
    long limit = 64;
    try (io.gpudirect.memory.BufferAllocator accounts =
        io.gpudirect.memory.BufferAllocator.root().newChildAllocator("small-device", limit)) {
      DeviceAllocator small = new DeviceAllocator(accounts);
      AllocationLimitException e = assertThrows(AllocationLimitException.class, () -> {
        try (Table t = reader(path, false, small).read("int32_nullable", "utf8_nullable")) {
          throw new AssertionError(path + " fit in " + limit + " bytes of device memory");
        }
      });
      assertEquals("root/small-device", e.allocator());
      assertTrue(e.getMessage().contains(path), e.getMessage());
      assertEquals(0, accounts.outstandingBytes());
    }
    assertEquals(0, GpuResources.shared().pool().chunksInUse());
    // Under the shared, unlimited allocator the same file reads.
    try (Table t = reader(path, false).read("int32_nullable", "utf8_nullable")) {
      assertTrue(t.getRowCount() > 0);
    }
    assertEquals(0, GpuResources.shared().device().accounts().outstandingBytes());
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void malformedFilesFailBeforeTheGpuReadsThem(String name) {
    try (Table t = reader("malformed/" + name, name.endsWith(".arrows")).read()) {
      assertTrue(t.getRowCount() >= 0);
    } catch (ArrowFormatException expected) {
      assertTrue(expected.getMessage().contains(name), expected.getMessage());
    }
    assertEquals(0, GpuResources.shared().device().accounts().outstandingBytes(),
        name + ": device bytes still charged after the read failed");
    // No sticky CUDA error is left behind.
    try (Table probe = new Table(ai.rapids.cudf.ColumnVector.fromInts(1, 2, 3))) {
      assertEquals(3, probe.getRowCount());
    }
  }

  private static CudfArrowIpcReader reader(String path, boolean stream) {
    return reader(path, stream, GpuResources.shared().device());
  }

  private static CudfArrowIpcReader reader(String path, boolean stream, DeviceAllocator device) {
    io.gpudirect.client.FileEntry file = client.stat(path);
    long size = file.length();
    GpuResources gpu = GpuResources.shared();
    RemoteFileDataSource source = new RemoteFileDataSource(client, path, file.version(), size, gpu);
    return new CudfArrowIpcReader(new RemoteFileChannel(client, path, file.version(), size), size, path, stream,
        (offset, dst) -> source.deviceRead(offset, dst, Cuda.DEFAULT_STREAM), device, gpu.host());
  }

  /** A cuDF value in {@link ReferenceValues}' shape: fixed-width values as the hex of their bytes. */
  private static Object cudfValue(HostColumnVectorCore column, long row) {
    if (column.isNull(row)) {
      return null;
    }
    DType type = column.getType();
    if (type.equals(DType.BOOL8)) {
      return column.getBoolean(row);
    }
    if (type.equals(DType.STRING)) {
      return column.getJavaString(row);
    }
    if (type.equals(DType.LIST)) {
      HostColumnVectorCore child = column.getChildColumnView(0);
      List<Object> values = new ArrayList<>();
      for (long j = column.getStartListOffset(row); j < column.getEndListOffset(row); j++) {
        values.add(cudfValue(child, j));
      }
      return values;
    }
    if (type.equals(DType.STRUCT)) {
      List<Object> values = new ArrayList<>();
      for (int c = 0; c < column.getNumChildren(); c++) {
        values.add(cudfValue(column.getChildColumnView(c), row));
      }
      return values;
    }
    int width = type.getSizeInBytes();
    byte[] raw = new byte[width];
    column.getData().getBytes(raw, 0, row * width, width);
    return ReferenceValues.hex(raw);
  }
}
