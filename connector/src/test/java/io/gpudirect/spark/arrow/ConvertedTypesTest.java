package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.arrow.ArrowFormatException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Types the integration corpus lacks, written here by Arrow Java and read back both formats. */
class ConvertedTypesTest {
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

  @Test
  void readsConvertedAndDictionaryColumns() throws IOException {
    int rows = 5;
    List<FieldVector> vectors = new ArrayList<>();
    UInt1Vector u8 = new UInt1Vector("u8", allocator);
    UInt8Vector u64 = new UInt8Vector("u64", allocator);
    DurationVector seconds = new DurationVector("secs",
        FieldType.nullable(new ArrowType.Duration(TimeUnit.SECOND)), allocator);
    IntervalDayVector dayTime = new IntervalDayVector("daytime", allocator);
    LargeVarCharVector large = new LargeVarCharVector("large", allocator);
    VarCharVector plain = new VarCharVector("plain", allocator);
    for (int i = 0; i < rows; i++) {
      if (i == 2) {
        u8.setNull(i);
        u64.setNull(i);
        seconds.setNull(i);
        dayTime.setNull(i);
        large.setNull(i);
        plain.setNull(i);
        continue;
      }
      u8.setSafe(i, 250 + i);
      u64.setSafe(i, -1L - i);
      seconds.setSafe(i, 86_400L * i - 1);
      dayTime.setSafe(i, i, -i * 1000);
      large.setSafe(i, ("large-" + i).getBytes(StandardCharsets.UTF_8));
      plain.setSafe(i, (i % 2 == 0 ? "even" : "odd").getBytes(StandardCharsets.UTF_8));
    }
    VarCharVector dictionaryValues = new VarCharVector("dict", allocator);
    dictionaryValues.setSafe(0, "odd".getBytes(StandardCharsets.UTF_8));
    dictionaryValues.setSafe(1, "even".getBytes(StandardCharsets.UTF_8));
    dictionaryValues.setValueCount(2);
    Dictionary dictionary = new Dictionary(dictionaryValues, new DictionaryEncoding(7L, false, null));
    for (FieldVector v : List.of(u8, u64, seconds, dayTime, large, plain)) {
      v.setValueCount(rows);
    }
    FieldVector encoded = (FieldVector) DictionaryEncoder.encode(plain, dictionary);
    encoded.setValueCount(rows);
    vectors.addAll(List.of(u8, u64, seconds, dayTime, large, encoded));
    DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider(dictionary);

    Path file = temp.resolve("converted.arrow");
    Path stream = temp.resolve("converted.arrows");
    List<List<Object>> expected;
    try (VectorSchemaRoot root = new VectorSchemaRoot(vectors)) {
      root.setRowCount(rows);
      expected = ArrowValues.rows(root, provider);
      try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
          ArrowFileWriter writer = new ArrowFileWriter(root, provider, out)) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
      try (FileChannel out = FileChannel.open(stream, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
          ArrowStreamWriter writer = new ArrowStreamWriter(root, provider, out)) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
    } finally {
      plain.close();
      dictionaryValues.close();
    }
    assertEquals(java.math.BigDecimal.valueOf(Long.MAX_VALUE).multiply(java.math.BigDecimal.valueOf(2))
        .add(java.math.BigDecimal.ONE), expected.get(0).get(1), "uint64 max");
    for (boolean isStream : new boolean[] {false, true}) {
      Path path = isStream ? stream : file;
      try (ArrowIpcFile ipc = ArrowIpcFile.open(FileChannel.open(path), path.toString(), isStream, allocator)) {
        StructType schema = ipc.sparkSchema();
        assertEquals(DataTypes.ShortType, schema.apply("u8").dataType());
        assertEquals(DataTypes.createDecimalType(20, 0), schema.apply("u64").dataType());
        assertEquals(DataTypes.StringType, schema.apply("plain").dataType());
        List<List<List<Object>>> batches =
            ArrowIpcFileTest.read(ipc, 0, isStream ? Integer.MAX_VALUE : ipc.recordBatchCount(), schema);
        assertEquals(List.of(expected), batches);
      }
    }
  }

  @Test
  void refusesUnionNamingTheColumn() throws IOException {
    Path file = temp.resolve("union.arrow");
    try (DenseUnionVector union = DenseUnionVector.empty("my_union", allocator);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(union))) {
      root.setRowCount(0);
      try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
          ArrowFileWriter writer = new ArrowFileWriter(root, null, out)) {
        writer.start();
        writer.end();
      }
    }
    ArrowFormatException e = assertThrows(ArrowFormatException.class,
        () -> ArrowIpcFile.open(FileChannel.open(file), "gpudirect://h:1/union.arrow", false, allocator));
    assertTrue(e.getMessage().contains("gpudirect://h:1/union.arrow"), e.getMessage());
    assertTrue(e.getMessage().contains("my_union") && e.getMessage().contains("Union"), e.getMessage());
  }
}
