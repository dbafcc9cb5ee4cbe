package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.arrow.cudf.CudfCases;
import io.gpudirect.testing.TestData;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.JsonFileReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reads every case of Arrow's integration corpus (file and stream format) through
 * {@link ArrowIpcFile} and compares every value, read through Spark's getters, with the
 * case's JSON expectation and with Arrow Java's own file reader, both mapped by the
 * documented type table.
 */
public class ArrowIpcFileTest {
  static final Path ARROW = TestData.dir("arrow");

  @TempDir
  Path temp;

  private BufferAllocator allocator;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void noLeaks() {
    assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory left allocated");
    allocator.close();
  }

  static Stream<String> cases() throws IOException {
    try (Stream<Path> files = Files.list(ARROW)) {
      return files.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".json.gz"))
          .map(n -> n.substring(0, n.length() - ".json.gz".length()))
          .sorted()
          .toList()
          .stream();
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void fileFormatMatchesExpectation(String name) throws IOException {
    List<List<List<Object>>> expected = expectedFromJson(name);
    assertEquals(expected, expectedFromArrowJava(name), "Arrow Java's reader disagrees with the JSON");
    assertReads(expected, name, ARROW.resolve(name + ".arrow_file"), false);
  }

  @ParameterizedTest
  @MethodSource("cases")
  void streamFormatMatchesExpectation(String name) throws IOException {
    assertReads(expectedFromJson(name), name, ARROW.resolve(name + ".stream"), true);
  }

  /**
   * Arrow's generator writes decimals with more digits than their declared precision
   * (generated_decimal: 128.10 as decimal(3, 2)); Spark cannot hold those, so the reader
   * must refuse them by name rather than fail mid-query or return something else.
   */
  private void assertReads(List<List<List<Object>>> expected, String name, Path path, boolean stream)
      throws IOException {
    if (decimalsOverflowPrecision(name)) {
      ArrowFormatException e = assertThrows(ArrowFormatException.class, () -> readAll(path, stream));
      assertTrue(e.getMessage().contains(path.getFileName().toString()), e.getMessage());
      assertTrue(e.getMessage().contains("more digits than its type"), e.getMessage());
    } else {
      assertEquals(expected, readAll(path, stream));
    }
  }

  private boolean decimalsOverflowPrecision(String name) throws IOException {
    File json = temp.resolve(name + ".json").toFile();
    try (JsonFileReader reader = new JsonFileReader(json, allocator)) {
      reader.start();
      VectorSchemaRoot root;
      while ((root = reader.read()) != null) {
        try (VectorSchemaRoot batch = root) {
          for (org.apache.arrow.vector.FieldVector v : batch.getFieldVectors()) {
            if (v instanceof org.apache.arrow.vector.DecimalVector) {
              int precision = ((org.apache.arrow.vector.DecimalVector) v).getPrecision();
              for (int i = 0; i < v.getValueCount(); i++) {
                if (!v.isNull(i) && ((java.math.BigDecimal) v.getObject(i)).precision() > precision) {
                  return true;
                }
              }
            }
          }
        }
      }
    }
    return false;
  }

  static Stream<String> compressedCases() throws IOException {
    return cases().filter(n -> !n.equals("generated_decimal"))
        .flatMap(n -> Stream.of(n + ".arrow_file+LZ4_FRAME", n + ".stream+ZSTD"));
  }

  /** Bodies compressed by Arrow Java's reference codecs read as the uncompressed corpus does. */
  @ParameterizedTest
  @MethodSource("compressedCases")
  void compressedCopiesMatchExpectation(String name) throws IOException {
    String base = name.substring(0, name.indexOf('.'));
    Path file = CudfCases.file(name, allocator);
    assertReads(expectedFromJson(base), base, file, CudfCases.isStream(name));
  }

  /** Large strings and binaries, large lists, maps, lists of structs and a dictionary, compressed or not. */
  @ParameterizedTest
  @MethodSource("extraTypeCases")
  void extraTypesMatchArrowJava(String name) throws IOException {
    Path file = CudfCases.file(name, allocator);
    boolean stream = CudfCases.isStream(name);
    List<List<List<Object>>> expected = new ArrayList<>();
    try (org.apache.arrow.vector.ipc.ArrowReader reader = CudfCases.reference(file, stream, allocator)) {
      while (reader.loadNextBatch()) {
        expected.add(ArrowValues.rows(reader.getVectorSchemaRoot(), reader));
      }
    }
    assertEquals(2, expected.size());
    assertEquals(expected, readAll(file, stream));
  }

  static Stream<String> extraTypeCases() throws IOException {
    return CudfCases.all().filter(n -> n.startsWith(CudfCases.EXTRA));
  }

  @Test
  void plansFileFormatByFooterBlocks() throws IOException {
    Path path = ARROW.resolve("generated_primitive.arrow_file");
    try (ArrowIpcFile file = open(path, false)) {
      assertFalse(file.isStream());
      assertEquals(2, file.recordBatchCount());
      try (FileChannel channel = FileChannel.open(path); ArrowFileReader arrow = new ArrowFileReader(channel, allocator)) {
        List<ArrowBlock> blocks = arrow.getRecordBlocks();
        for (int i = 0; i < blocks.size(); i++) {
          assertEquals(blocks.get(i).getMetadataLength() + blocks.get(i).getBodyLength(), file.recordBatchBytes(i));
        }
      }
    }
  }

  @Test
  void streamIsOnePartition() throws IOException {
    try (ArrowIpcFile file = open(ARROW.resolve("generated_primitive.stream"), true)) {
      assertTrue(file.isStream());
      assertThrows(UnsupportedOperationException.class, file::recordBatchCount);
    }
  }

  @Test
  void readsBatchRangeOfFileFormat() throws IOException {
    String name = "generated_datetime";
    List<List<List<Object>>> expected = expectedFromJson(name);
    try (ArrowIpcFile file = open(ARROW.resolve(name + ".arrow_file"), false)) {
      int count = file.recordBatchCount();
      assertEquals(2, count);
      assertEquals(expected.subList(0, 1), read(file, 0, 1, file.sparkSchema()));
      assertEquals(expected.subList(1, 2), read(file, 1, 2, file.sparkSchema()));
      assertEquals(expected.subList(count - 1, count), read(file, count - 1, count, file.sparkSchema()));
      assertEquals(List.of(), read(file, 2, 2, file.sparkSchema()));
      assertThrows(IllegalArgumentException.class, () -> file.readBatches(0, count + 1, file.sparkSchema()));
    }
  }

  @Test
  void selectsAndReordersColumns() throws IOException {
    String name = "generated_primitive";
    List<List<List<Object>>> expected = expectedFromJson(name);
    for (boolean stream : new boolean[] {false, true}) {
      try (ArrowIpcFile file = open(ARROW.resolve(name + (stream ? ".stream" : ".arrow_file")), stream)) {
        StructType all = file.sparkSchema();
        int utf8 = all.fieldIndex("utf8_nullable");
        int uint64 = all.fieldIndex("uint64_nonnullable");
        int int8 = all.fieldIndex("int8_nullable");
        StructType required = new StructType(new org.apache.spark.sql.types.StructField[] {
          all.fields()[utf8], all.fields()[uint64], all.fields()[int8]});
        List<List<List<Object>>> want = new ArrayList<>();
        for (List<List<Object>> batch : expected) {
          List<List<Object>> rows = new ArrayList<>();
          for (List<Object> row : batch) {
            rows.add(java.util.Arrays.asList(row.get(utf8), row.get(uint64), row.get(int8)));
          }
          want.add(rows);
        }
        assertEquals(want, read(file, 0, stream ? Integer.MAX_VALUE : file.recordBatchCount(), required));
      }
    }
  }

  @Test
  void refusesUnknownColumn() throws IOException {
    try (ArrowIpcFile file = open(ARROW.resolve("generated_primitive.arrow_file"), false)) {
      StructType required = new StructType().add("no_such_column", DataTypes.IntegerType);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> file.readBatches(0, 1, required));
      assertTrue(e.getMessage().contains("no_such_column"), e.getMessage());
    }
  }

  @Test
  void mapsTypesAsDocumented() throws IOException {
    try (ArrowIpcFile file = open(ARROW.resolve("generated_datetime.arrow_file"), false)) {
      StructType s = file.sparkSchema();
      assertEquals(DataTypes.DateType, s.apply("f1").dataType());
      assertEquals(DataTypes.LongType, s.apply("f2").dataType());
      assertEquals(DataTypes.TimestampNTZType, s.apply("f6").dataType());
      assertEquals(DataTypes.TimestampType, s.apply("f14").dataType());
    }
    try (ArrowIpcFile file = open(ARROW.resolve("generated_primitive.arrow_file"), false)) {
      StructType s = file.sparkSchema();
      assertEquals(DataTypes.ShortType, s.apply("uint8_nullable").dataType());
      assertEquals(DataTypes.IntegerType, s.apply("uint16_nullable").dataType());
      assertEquals(DataTypes.LongType, s.apply("uint32_nullable").dataType());
      assertEquals(DataTypes.createDecimalType(20, 0), s.apply("uint64_nullable").dataType());
      assertEquals(DataTypes.BinaryType, s.apply("fixedsizebinary_19_nullable").dataType());
      assertFalse(s.apply("bool_nonnullable").nullable());
    }
  }

  private ArrowIpcFile open(Path path, boolean stream) throws IOException {
    return ArrowIpcFile.open(FileChannel.open(path), "gpudirect://127.0.0.1:7337/arrow/" + path.getFileName(),
        stream, allocator);
  }

  private List<List<List<Object>>> readAll(Path path, boolean stream) throws IOException {
    try (ArrowIpcFile file = open(path, stream)) {
      return read(file, 0, stream ? Integer.MAX_VALUE : file.recordBatchCount(), file.sparkSchema());
    }
  }

  public static List<List<List<Object>>> read(ArrowIpcFile file, int from, int to, StructType required) {
    List<List<List<Object>>> batches = new ArrayList<>();
    try (ArrowBatchReader reader = file.readBatches(from, to, required)) {
      while (reader.next()) {
        ColumnarBatch batch = reader.get();
        batches.add(SparkValues.rows(batch, required));
      }
    }
    return batches;
  }

  private List<List<List<Object>>> expectedFromJson(String name) throws IOException {
    File json = temp.resolve(name + ".json").toFile();
    try (InputStream in = new GZIPInputStream(Files.newInputStream(ARROW.resolve(name + ".json.gz")))) {
      Files.copy(in, json.toPath(), StandardCopyOption.REPLACE_EXISTING);
    }
    List<List<List<Object>>> batches = new ArrayList<>();
    try (JsonFileReader reader = new JsonFileReader(json, allocator)) {
      reader.start();
      VectorSchemaRoot root;
      while ((root = reader.read()) != null) {
        try (VectorSchemaRoot batch = root) {
          batches.add(ArrowValues.rows(batch, reader));
        }
      }
    }
    return batches;
  }

  private List<List<List<Object>>> expectedFromArrowJava(String name) throws IOException {
    List<List<List<Object>>> batches = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(ARROW.resolve(name + ".arrow_file"));
        ArrowFileReader reader = new ArrowFileReader(channel, allocator)) {
      for (ArrowBlock block : reader.getRecordBlocks()) {
        reader.loadRecordBatch(block);
        batches.add(ArrowValues.rows(reader.getVectorSchemaRoot(), reader));
      }
    }
    return batches;
  }
}
