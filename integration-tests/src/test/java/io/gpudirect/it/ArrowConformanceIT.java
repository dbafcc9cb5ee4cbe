package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.JsonFileReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every case of Arrow's integration corpus, in file and stream format, reads through gpudirect
 * as the case's JSON says, mapped to Spark as docs/arrow-type-mapping.md documents. The
 * expectation is built here, from Arrow Java's JSON reader, without the connector's code.
 */
class ArrowConformanceIT {
  @TempDir
  static Path tmp;
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    fixture = ServerFixture.serve(LocalSpark.testdata());
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  static Stream<String> files() throws IOException {
    List<String> names = LocalSpark.testdataFiles("arrow", n -> n.endsWith(".arrow_file") || n.endsWith(".stream")).toList();
    assertFalse(names.isEmpty(), "no Arrow cases under " + LocalSpark.testdata().resolve("arrow"));
    return names.stream();
  }

  @ParameterizedTest
  @MethodSource("files")
  void readsAsTheJsonSays(String file) throws IOException {
    Expected expected = expected(caseName(file));
    SparkSession spark = LocalSpark.get();
    Dataset<Row> df = spark.read().format("gpudirect").load(fixture.uri("arrow/" + file));
    assertEquals(expected.schema, df.schema(), "schema of " + file);
    if (!expected.overflowingDecimalColumns.isEmpty()) {
      // Documented refusal: Spark cannot hold a decimal with more digits than its precision.
      Exception e = assertThrows(Exception.class, df::collectAsList, file + " holds decimals Spark cannot hold");
      String messages = messages(e);
      assertTrue(messages.contains(file), "error must name " + file + " but was: " + messages);
      assertTrue(expected.overflowingDecimalColumns.stream().anyMatch(c -> messages.contains("column '" + c + "'")),
          "error must name a column among " + expected.overflowingDecimalColumns + " but was: " + messages);
      return;
    }
    assertRows(expected.rows, df.collectAsList(), file);
  }

  /** The corpus must keep exercising the refusal, or the branch above tests nothing. */
  @Test
  void decimalCaseIsRefusedByDocumentation() throws IOException {
    assertFalse(expected("generated_decimal").overflowingDecimalColumns.isEmpty(),
        "generated_decimal no longer holds decimals beyond their precision");
  }

  @ParameterizedTest
  @ValueSource(strings = {"generated_primitive.arrow_file", "generated_primitive.stream"})
  void selectsColumnsInReversedOrder(String file) throws IOException {
    Expected expected = expected(caseName(file));
    int first = expected.schema.fieldIndex("int32_nullable");
    int second = expected.schema.fieldIndex("utf8_nonnullable");
    assertTrue(first < second, "columns are picked to reverse file order");
    Dataset<Row> df = LocalSpark.get().read().format("gpudirect").load(fixture.uri("arrow/" + file))
        .select("utf8_nonnullable", "int32_nullable");
    assertEquals(new StructType(new StructField[] {expected.schema.fields()[second], expected.schema.fields()[first]}),
        df.schema(), "schema of the selection of " + file);
    List<Row> want = new ArrayList<>();
    for (Row r : expected.rows) {
      want.add(RowFactory.create(r.get(second), r.get(first)));
    }
    assertRows(want, df.collectAsList(), file + " (selected)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"generated_primitive.arrow_file", "generated_primitive.stream"})
  void filtersOnAnIntColumn(String file) throws IOException {
    Expected expected = expected(caseName(file));
    int column = expected.schema.fieldIndex("int32_nullable");
    List<Row> want = new ArrayList<>();
    for (Row r : expected.rows) {
      if (!r.isNullAt(column) && r.getInt(column) > 0) {
        want.add(r);
      }
    }
    assertTrue(!want.isEmpty() && want.size() < expected.rows.size(), "the filter keeps some rows but not all");
    Dataset<Row> df = LocalSpark.get().read().format("gpudirect").load(fixture.uri("arrow/" + file))
        .where("int32_nullable > 0");
    assertRows(want, df.collectAsList(), file + " (filtered)");
  }

  private static void assertRows(List<Row> expected, List<Row> actual, String what) {
    assertEquals(expected.size(), actual.size(), "row count of " + what);
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i), actual.get(i), "row " + i + " of " + what);
    }
  }

  private static String caseName(String file) {
    return file.substring(0, file.lastIndexOf('.'));
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" | ");
    }
    return sb.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // The expectation: the case's JSON read by Arrow Java, mapped by the documented table into the
  // external types collectAsList returns (session time zone UTC, java.time API off).

  private static final class Expected {
    final StructType schema;
    final List<Row> rows = new ArrayList<>();
    final Set<String> overflowingDecimalColumns = new LinkedHashSet<>();

    Expected(StructType schema) {
      this.schema = schema;
    }
  }

  private static Expected expected(String name) throws IOException {
    Path json = tmp.resolve(name + ".json");
    try (InputStream in = new GZIPInputStream(
        Files.newInputStream(LocalSpark.testdata().resolve("arrow").resolve(name + ".json.gz")))) {
      Files.copy(in, json, StandardCopyOption.REPLACE_EXISTING);
    }
    try (BufferAllocator allocator = new RootAllocator();
         JsonFileReader reader = new JsonFileReader(json.toFile(), allocator)) {
      Schema arrow = reader.start();
      List<StructField> fields = new ArrayList<>();
      for (Field f : arrow.getFields()) {
        fields.add(sparkField(f));
      }
      Expected expected = new Expected(new StructType(fields.toArray(new StructField[0])));
      VectorSchemaRoot root;
      while ((root = reader.read()) != null) {
        try (VectorSchemaRoot batch = root) {
          List<FieldVector> vectors = batch.getFieldVectors();
          for (FieldVector v : vectors) {
            noteOverflowingDecimals(v, expected.overflowingDecimalColumns);
          }
          for (int i = 0; i < batch.getRowCount(); i++) {
            Object[] values = new Object[vectors.size()];
            for (int c = 0; c < values.length; c++) {
              values[c] = value(vectors.get(c), i);
            }
            expected.rows.add(RowFactory.create(values));
          }
        }
      }
      return expected;
    } finally {
      Files.deleteIfExists(json);
    }
  }

  private static void noteOverflowingDecimals(FieldVector v, Set<String> columns) {
    if (v instanceof DecimalVector || v instanceof Decimal256Vector) {
      int precision = ((ArrowType.Decimal) v.getField().getType()).getPrecision();
      for (int i = 0; i < v.getValueCount(); i++) {
        if (!v.isNull(i) && ((BigDecimal) v.getObject(i)).unscaledValue().abs()
            .compareTo(BigInteger.TEN.pow(precision)) >= 0) {
          columns.add(v.getName());
          return;
        }
      }
    }
    for (FieldVector child : v.getChildrenFromFields()) {
      noteOverflowingDecimals(child, columns);
    }
  }

  /**
   * The source reports every column, at every level, as nullable, as Spark's file sources do
   * (a file may say a column is required, the next file may not); the types are the table's.
   */
  private static StructField sparkField(Field f) {
    return new StructField(f.getName(), sparkType(f), true, Metadata.empty());
  }

  private static DataType sparkType(Field f) {
    if (f.getDictionary() != null) {
      throw new AssertionError("no expectation for dictionary-encoded " + f);
    }
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Null:
        return DataTypes.NullType;
      case Bool:
        return DataTypes.BooleanType;
      case Int: {
        ArrowType.Int it = (ArrowType.Int) t;
        switch (it.getBitWidth()) {
          case 8:
            return it.getIsSigned() ? DataTypes.ByteType : DataTypes.ShortType;
          case 16:
            return it.getIsSigned() ? DataTypes.ShortType : DataTypes.IntegerType;
          case 32:
            return it.getIsSigned() ? DataTypes.IntegerType : DataTypes.LongType;
          default:
            return it.getIsSigned() ? DataTypes.LongType : DataTypes.createDecimalType(20, 0);
        }
      }
      case FloatingPoint:
        switch (((ArrowType.FloatingPoint) t).getPrecision()) {
          case SINGLE:
            return DataTypes.FloatType;
          case DOUBLE:
            return DataTypes.DoubleType;
          default:
            throw new AssertionError("half floats are refused; no expectation for " + f);
        }
      case Utf8:
      case LargeUtf8:
        return DataTypes.StringType;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        return DataTypes.BinaryType;
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        return DataTypes.createDecimalType(d.getPrecision(), d.getScale());
      }
      case Date:
        return DataTypes.DateType;
      case Time:
        return DataTypes.LongType;
      case Timestamp:
        return ((ArrowType.Timestamp) t).getTimezone() == null ? DataTypes.TimestampNTZType : DataTypes.TimestampType;
      case List:
      case LargeList:
      case FixedSizeList: {
        Field element = f.getChildren().get(0);
        return DataTypes.createArrayType(sparkType(element), true);
      }
      case Struct: {
        List<StructField> fields = new ArrayList<>();
        for (Field child : f.getChildren()) {
          fields.add(sparkField(child));
        }
        return new StructType(fields.toArray(new StructField[0]));
      }
      default:
        throw new AssertionError("no expectation for Arrow type " + t + " of " + f);
    }
  }

  private static Object value(FieldVector v, int i) {
    if (v.isNull(i)) {
      return null;
    }
    ArrowType t = v.getField().getType();
    if (v instanceof BitVector b) {
      return b.get(i) != 0;
    } else if (v instanceof TinyIntVector x) {
      return x.get(i);
    } else if (v instanceof SmallIntVector x) {
      return x.get(i);
    } else if (v instanceof IntVector x) {
      return x.get(i);
    } else if (v instanceof BigIntVector x) {
      return x.get(i);
    } else if (v instanceof UInt1Vector x) {
      return (short) Byte.toUnsignedInt(x.get(i));
    } else if (v instanceof UInt2Vector x) {
      return (int) x.get(i);
    } else if (v instanceof UInt4Vector x) {
      return Integer.toUnsignedLong(x.get(i));
    } else if (v instanceof UInt8Vector x) {
      return new BigDecimal(new BigInteger(Long.toUnsignedString(x.get(i))));
    } else if (v instanceof Float4Vector x) {
      return x.get(i);
    } else if (v instanceof Float8Vector x) {
      return x.get(i);
    } else if (v instanceof VarCharVector x) {
      return new String(x.get(i), StandardCharsets.UTF_8);
    } else if (v instanceof LargeVarCharVector x) {
      return new String(x.get(i), StandardCharsets.UTF_8);
    } else if (v instanceof VarBinaryVector x) {
      return x.get(i);
    } else if (v instanceof LargeVarBinaryVector x) {
      return x.get(i);
    } else if (v instanceof FixedSizeBinaryVector x) {
      return x.get(i);
    } else if (v instanceof DecimalVector x) {
      return x.getObject(i);
    } else if (v instanceof Decimal256Vector x) {
      return x.getObject(i);
    } else if (v instanceof DateDayVector x) {
      return DateTimeUtils.toJavaDate(x.get(i));
    } else if (v instanceof DateMilliVector x) {
      return DateTimeUtils.toJavaDate(Math.toIntExact(Math.floorDiv(x.get(i), 86_400_000L)));
    } else if (v instanceof TimeSecVector x) {
      return x.get(i) * 1_000_000L;
    } else if (v instanceof TimeMilliVector x) {
      return x.get(i) * 1_000L;
    } else if (v instanceof TimeMicroVector x) {
      return x.get(i);
    } else if (v instanceof TimeNanoVector x) {
      return Math.floorDiv(x.get(i), 1_000L);
    } else if (v instanceof TimeStampVector x) {
      ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
      long micros = micros(x.get(i), ts.getUnit());
      if (ts.getTimezone() == null) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
            (int) Math.floorMod(micros, 1_000_000L) * 1_000, ZoneOffset.UTC);
      }
      return DateTimeUtils.toJavaTimestamp(micros);
    } else if (v instanceof ListVector x) {
      return elements(x.getDataVector(), x.getOffsetBuffer().getInt(4L * i), x.getOffsetBuffer().getInt(4L * (i + 1)));
    } else if (v instanceof LargeListVector x) {
      return elements(x.getDataVector(), Math.toIntExact(x.getOffsetBuffer().getLong(8L * i)),
          Math.toIntExact(x.getOffsetBuffer().getLong(8L * (i + 1))));
    } else if (v instanceof FixedSizeListVector x) {
      int n = x.getListSize();
      return elements(x.getDataVector(), i * n, (i + 1) * n);
    } else if (v instanceof StructVector x) {
      List<FieldVector> children = x.getChildrenFromFields();
      Object[] values = new Object[children.size()];
      for (int c = 0; c < values.length; c++) {
        values[c] = value(children.get(c), i);
      }
      return RowFactory.create(values);
    }
    throw new AssertionError("no expectation for " + v.getClass().getSimpleName() + " " + v.getField());
  }

  private static long micros(long value, org.apache.arrow.vector.types.TimeUnit unit) {
    switch (unit) {
      case SECOND:
        return Math.multiplyExact(value, 1_000_000L);
      case MILLISECOND:
        return Math.multiplyExact(value, 1_000L);
      case MICROSECOND:
        return value;
      default:
        return Math.floorDiv(value, 1_000L);
    }
  }

  /** Arrays come back from collectAsList as Scala sequences. */
  private static scala.collection.Seq<Object> elements(FieldVector data, int from, int to) {
    List<Object> values = new ArrayList<>();
    for (int j = from; j < to; j++) {
      values.add(value(data, j));
    }
    return scala.collection.JavaConverters.asScalaBuffer(values).toList();
  }
}
