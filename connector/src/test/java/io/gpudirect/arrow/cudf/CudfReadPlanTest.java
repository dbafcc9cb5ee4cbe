package io.gpudirect.arrow.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.arrow.FileFooter;
import io.gpudirect.spark.arrow.ArrowIpcFile;
import io.gpudirect.spark.arrow.ArrowIpcFileTest;
import io.gpudirect.gpu.DeviceAllocator;
import io.gpudirect.gpu.HostMemoryAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host half of the cuDF path, without a GPU: for every case of {@link CudfCases} (the
 * corpus, compressed copies of it, and the extra nested, large, binary and dictionary types),
 * the values read from exactly the slices the GPU would wrap equal Arrow Java's reading;
 * every type cuDF cannot hold is refused by name; and lying compressed lengths, offsets and
 * dictionary indices are refused before a body byte would be fetched.
 */
class CudfReadPlanTest {
  @TempDir
  static Path temp;

  private static BufferAllocator allocator;

  @BeforeAll
  static void open() {
    allocator = new RootAllocator();
  }

  @AfterAll
  static void noLeaks() {
    assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory left allocated");
    allocator.close();
  }

  static java.util.stream.Stream<String> cases() throws IOException {
    return CudfCases.all();
  }

  @ParameterizedTest
  @MethodSource("cases")
  void plannedSlicesHoldWhatArrowJavaReads(String name) throws IOException {
    Path file = CudfCases.file(name, allocator);
    boolean stream = CudfCases.isStream(name);
    List<String> supported = new ArrayList<>();
    List<List<Object>> expected = new ArrayList<>();
    try (ArrowReader reference = CudfCases.reference(file, stream, allocator)) {
      for (Field f : reference.getVectorSchemaRoot().getSchema().getFields()) {
        try {
          CudfTypeMapping.of(f, name);
          supported.add(f.getName());
        } catch (ArrowFormatException refused) {
          assertRefusedByName(file, stream, f.getName(), refused);
        }
      }
      while (reference.loadNextBatch()) {
        VectorSchemaRoot root = reference.getVectorSchemaRoot();
        for (int r = 0; r < root.getRowCount(); r++) {
          List<Object> row = new ArrayList<>();
          for (String column : supported) {
            row.add(ReferenceValues.value(root.getVector(column), r, reference));
          }
          expected.add(row);
        }
      }
    }
    if (supported.isEmpty()) {
      return;
    }
    try (FileChannel channel = FileChannel.open(file)) {
      CudfReadPlan plan = CudfReadPlan.of(channel, channel.size(), name, stream, supported.toArray(new String[0]));
      assertEquals(expected, PlannedValues.rows(plan, channel), name);

      // Slice by slice, as Spark cuts the file: each plan holds its own record batches and
      // no other, and together they hold the same rows in the same order.
      List<ArrowBlock> records = plan.steps().stream().filter(st -> !st.isDictionary()).map(CudfReadPlan.Step::block).toList();
      List<List<Object>> sliced = new ArrayList<>();
      for (int first = 0; first < records.size(); first += 2) {
        CudfReadPlan slice = CudfReadPlan.of(channel, channel.size(), name, stream, first, 2,
            supported.toArray(new String[0]));
        assertEquals(records.subList(first, Math.min(first + 2, records.size())),
            slice.steps().stream().filter(st -> !st.isDictionary()).map(CudfReadPlan.Step::block).toList(), name);
        sliced.addAll(PlannedValues.rows(slice, channel));
      }
      assertEquals(expected, sliced, name + ", read slice by slice");
    }
  }

  private static void assertRefusedByName(Path file, boolean stream, String column, ArrowFormatException mapping)
      throws IOException {
    assertTrue(mapping.getMessage().contains("'" + column + "'") && mapping.getMessage().contains("cuDF cannot hold"),
        mapping.getMessage());
    try (FileChannel channel = FileChannel.open(file)) {
      String shown = file.getFileName().toString();
      ArrowFormatException e = assertThrows(ArrowFormatException.class,
          () -> CudfReadPlan.of(channel, channel.size(), shown, stream, column));
      assertTrue(e.getMessage().contains("'" + column + "'") && e.getMessage().contains(shown), e.getMessage());
    }
  }

  @Test
  void compressedCopiesAreReallyCompressed() throws IOException {
    for (CodecType codec : new CodecType[] {CodecType.LZ4_FRAME, CodecType.ZSTD}) {
      // Arrow's writer stores a buffer raw (length -1) when compressing does not pay; not all of them.
      assertTrue(compressedBuffer("generated_primitive.arrow_file+" + codec) != null, codec + " compressed nothing");
    }
  }

  @Test
  void aHugeUncompressedLengthIsRefusedBeforeAllocating() throws IOException {
    for (long lie : new long[] {1L << 40, Long.MAX_VALUE, -7, 1L << 20}) {
      Path file = patched("extra_types.arrow_file+ZSTD", "large_utf8", 1, 0, lie);
      assertRefused(file, "claims " + lie + " bytes uncompressed");
      // The host path (Spark batches) refuses it too, naming the file.
      if (lie != 1L << 20) {
        try (ArrowIpcFile arrow = ArrowIpcFile.open(FileChannel.open(file), file.getFileName().toString(), false,
            allocator)) {
          ArrowFormatException e = assertThrows(ArrowFormatException.class,
              () -> ArrowIpcFileTest.read(arrow, 0, arrow.recordBatchCount(), arrow.sparkSchema()));
          assertTrue(e.getMessage().contains("claims " + lie) && e.getMessage().contains(file.getFileName().toString()),
              e.getMessage());
        }
      }
    }
  }

  @Test
  void anUncompressedLengthShortOfTheRowsIsRefused() throws IOException {
    assertRefused(patched("generated_primitive.arrow_file+LZ4_FRAME", "int32_nonnullable", 1, 0, 3), "fewer than the");
  }

  @Test
  void aCorruptFrameIsRefused() throws IOException {
    for (CodecType codec : new CodecType[] {CodecType.LZ4_FRAME, CodecType.ZSTD}) {
      String name = "generated_primitive.arrow_file+" + codec;
      String column = compressedBuffer(name);
      // The first 8 bytes after the prefix: the frame's magic and header.
      assertRefused(patched(name, column, 1, 8, 0x0123456789abcdefL),
          codec == CodecType.ZSTD ? "not a valid ZSTD frame" : "not a valid LZ4 frame");
    }
  }

  /** A column of the case whose buffer 1 (values or offsets) in batch 0 is stored compressed, not raw. */
  private static String compressedBuffer(String name) throws IOException {
    try (FileChannel channel = FileChannel.open(CudfCases.file(name, allocator))) {
      for (Field f : FileFooter.read(channel, channel.size(), name).getSchema().getFields()) {
        ByteBuffer b = FileFooter.readAt(channel, bufferStart(channel, f.getName(), 1), 8, name)
            .order(ByteOrder.LITTLE_ENDIAN);
        if (b.getLong(0) > 0 && f.getType().getTypeID() != org.apache.arrow.vector.types.pojo.ArrowType.ArrowTypeID.Bool) {
          return f.getName();
        }
      }
    }
    return null;
  }

  @Test
  void aDictionaryIndexOutsideItsDictionaryIsRefused() throws IOException {
    Path file = patchedShort("extra_types.arrow_file", "dictionary_words", 1, 0, (short) 99);
    assertRefused(file, "dictionary index 99 outside the dictionary's 4 values");
  }

  @Test
  void decreasingLargeListOffsetsAreRefused() throws IOException {
    Path file = patched("extra_types.arrow_file", "large_list", 1, 8, 5);
    assertRefused(file, "is below the one before it");
  }

  @Test
  void listOffsetsPastTheirValuesAreRefused() throws IOException {
    // large_list batch 0 holds 2 items; its last offset now says 40.
    Path file = patched("extra_types.arrow_file", "large_list", 1, 5 * 8, 40);
    assertRefused(file, "offsets end at 40, past the 2 values they index");
  }

  @Test
  void aNullListRowThatIsNotEmptyIsRefused() throws IOException {
    // list_of_structs batch 0: row 3 is null; its end offset (entry 4) moves one value on.
    ByteBuffer at = bufferBytes("extra_types.arrow_file", "list_of_structs", 1);
    int end = at.getInt(4 * 4);
    Path file = patchedInt("extra_types.arrow_file", "list_of_structs", 1, 4 * 4, end + 1);
    assertRefused(file, "row 3 is null but holds 1 values");
  }

  @Test
  void unselectedColumnsOfRefusedTypesAndTheirDictionariesAreNeverRead() throws IOException {
    Path file = CudfCases.file("extra_types.stream", allocator);
    try (FileChannel channel = FileChannel.open(file)) {
      CudfReadPlan plan = CudfReadPlan.of(channel, channel.size(), "x", true, "struct");
      assertFalse(plan.steps().stream().anyMatch(CudfReadPlan.Step::isDictionary));
      plan = CudfReadPlan.of(channel, channel.size(), "x", true, "dictionary_words");
      assertEquals(1, plan.steps().stream().filter(CudfReadPlan.Step::isDictionary).count());
    }
  }

  private static void assertRefused(Path file, String why) throws IOException {
    String shown = file.getFileName().toString();
    try (FileChannel channel = FileChannel.open(file)) {
      CudfArrowIpcReader reader = new CudfArrowIpcReader(channel, channel.size(), shown, false,
          (offset, dst) -> fail("a body of " + shown + " was fetched to the device"),
          new DeviceAllocator(io.gpudirect.memory.BufferAllocator.newRoot("no device memory expected", 0)),
          new HostMemoryAllocator(io.gpudirect.memory.BufferAllocator.newRoot("no staging expected", 0)));
      ArrowFormatException e = assertThrows(ArrowFormatException.class, () -> reader.read());
      assertTrue(e.getMessage().contains(why) && e.getMessage().contains(shown), e.getMessage());
    }
  }

  /** A copy of a case's file format with 8 bytes of column buffer {@code buffer} of batch 0 replaced. */
  private static Path patched(String name, String column, int buffer, long at, long value) throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value);
    return patch(name, column, buffer, at, bytes);
  }

  private static Path patchedInt(String name, String column, int buffer, long at, int value) throws IOException {
    return patch(name, column, buffer, at, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value));
  }

  private static Path patchedShort(String name, String column, int buffer, long at, short value) throws IOException {
    return patch(name, column, buffer, at, ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).putShort(0, value));
  }

  private static int patches;

  private static Path patch(String name, String column, int buffer, long at, ByteBuffer bytes) throws IOException {
    Path source = CudfCases.file(name, allocator);
    Path copy = temp.resolve("patched-" + (patches++) + "-" + source.getFileName());
    Files.copy(source, copy);
    try (FileChannel channel = FileChannel.open(copy, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      channel.write(bytes, bufferStart(channel, column, buffer) + at);
    }
    return copy;
  }

  private static ByteBuffer bufferBytes(String name, String column, int buffer) throws IOException {
    try (FileChannel channel = FileChannel.open(CudfCases.file(name, allocator))) {
      long start = bufferStart(channel, column, buffer);
      return FileFooter.readAt(channel, start, 64, name).order(ByteOrder.LITTLE_ENDIAN);
    }
  }

  /** Where buffer {@code buffer} of {@code column} (0 is its validity) of record batch 0 starts in the file. */
  private static long bufferStart(FileChannel channel, String column, int buffer) throws IOException {
    ArrowFooter footer = FileFooter.read(channel, channel.size(), "patch");
    ArrowBlock block = footer.getRecordBatches().get(0);
    RecordBatch batch = (RecordBatch) FileFooter.readBlockMessage(channel, block, "patch", "patch")
        .header(new RecordBatch());
    int index = 0;
    for (Field f : footer.getSchema().getFields()) {
      if (f.getName().equals(column)) {
        Buffer b = batch.buffers(new Buffer(), index + buffer);
        return block.getOffset() + block.getMetadataLength() + b.offset();
      }
      index += CudfBatchPlanner.bufferCount(f);
    }
    throw new AssertionError("no column " + column);
  }
}
