package io.gpudirect.arrow.cudf;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Arrow IPC files the shared corpus lacks, written by Arrow Java's own writer (so they are
 * what a real producer writes): compressed copies of corpus files (with arrow-compression, the
 * reference codecs), and a file of the types added for cuDF (large strings and binaries,
 * large lists, maps, lists of structs, a dictionary-encoded column) over two batches.
 */
final class ArrowFixtures {
  private ArrowFixtures() {}

  /** {@code source} rewritten with every body compressed by {@code codec} (a real compressed file). */
  static Path compressedCopy(Path source, boolean stream, CompressionUtil.CodecType codec, Path target,
      BufferAllocator allocator) throws IOException {
    try (FileChannel in = FileChannel.open(source);
         ArrowReader reader = stream ? new ArrowStreamReader(in, allocator) : new ArrowFileReader(in, allocator);
         FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
             StandardOpenOption.TRUNCATE_EXISTING)) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      List<ArrowRecordBatch> batches = new ArrayList<>();
      try {
        // A stream's dictionaries arrive with its first batch; load them all before writing.
        while (reader.loadNextBatch()) {
          batches.add(new VectorUnloader(root).getRecordBatch());
        }
        try (ArrowWriter writer = writer(root, reader, out, stream, codec)) {
          writer.start();
          for (ArrowRecordBatch batch : batches) {
            new VectorLoader(root).load(batch);
            writer.writeBatch();
          }
          writer.end();
        }
      } finally {
        batches.forEach(ArrowRecordBatch::close);
      }
    }
    return target;
  }

  private static ArrowWriter writer(VectorSchemaRoot root, DictionaryProvider dictionaries, FileChannel out,
      boolean stream, CompressionUtil.CodecType codec) {
    if (codec == CompressionUtil.CodecType.NO_COMPRESSION) {
      return stream ? new ArrowStreamWriter(root, dictionaries, out) : new ArrowFileWriter(root, dictionaries, out);
    }
    return stream
        ? new ArrowStreamWriter(root, dictionaries, out, IpcOption.DEFAULT, CommonsCompressionFactory.INSTANCE, codec)
        : new ArrowFileWriter(root, dictionaries, out, null, IpcOption.DEFAULT, CommonsCompressionFactory.INSTANCE,
            codec);
  }

  static final long DICTIONARY_ID = 7;
  private static final String[] WORDS = {"alpha", "beta", "gamma", "δέλτα"};

  /**
   * Two batches (5 and 3 rows) of: large_utf8, large_binary, binary, large_list&lt;int32&gt;,
   * map&lt;int32, int64&gt;, list&lt;struct&lt;a: int64, b: utf8&gt;&gt;, struct&lt;a: int32, b: utf8&gt; and
   * a dictionary-encoded utf8 with int16 indices, each with nulls.
   */
  static Path extraTypes(Path target, boolean stream, CompressionUtil.CodecType codec, BufferAllocator allocator)
      throws IOException {
    try (VarCharVector words = new VarCharVector("words", allocator)) {
      for (int i = 0; i < WORDS.length; i++) {
        words.setSafe(i, WORDS[i].getBytes(StandardCharsets.UTF_8));
      }
      words.setValueCount(WORDS.length);
      Dictionary dictionary = new Dictionary(words,
          new DictionaryEncoding(DICTIONARY_ID, false, new ArrowType.Int(16, true)));
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider(dictionary);
      try (VectorSchemaRoot first = extraTypesBatch(0, 5, dictionary, allocator);
           VectorSchemaRoot second = extraTypesBatch(1, 3, dictionary, allocator);
           FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
               StandardOpenOption.TRUNCATE_EXISTING);
           ArrowWriter writer = writer(first, provider, out, stream, codec)) {
        writer.start();
        writer.writeBatch();
        try (ArrowRecordBatch batch = new VectorUnloader(second).getRecordBatch()) {
          new VectorLoader(first).load(batch);
        }
        writer.writeBatch();
        writer.end();
      }
    }
    return target;
  }

  private static VectorSchemaRoot extraTypesBatch(int b, int rows, Dictionary dictionary, BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>();
    LargeVarCharVector largeUtf8 = new LargeVarCharVector("large_utf8", allocator);
    LargeVarBinaryVector largeBinary = new LargeVarBinaryVector("large_binary", allocator);
    VarBinaryVector binary = new VarBinaryVector("binary", allocator);
    for (int r = 0; r < rows; r++) {
      if ((r + b) % 3 == 1) {
        largeUtf8.setNull(r);
        largeBinary.setNull(r);
        binary.setNull(r);
        continue;
      }
      String s = WORDS[(r + b) % WORDS.length] + "-" + r;
      largeUtf8.setSafe(r, s.getBytes(StandardCharsets.UTF_8));
      byte[] bytes = new byte[r + b];
      for (int k = 0; k < bytes.length; k++) {
        bytes[k] = (byte) (k * 37 + r - 100);
      }
      largeBinary.setSafe(r, bytes);
      binary.setSafe(r, bytes);
    }
    largeUtf8.setValueCount(rows);
    largeBinary.setValueCount(rows);
    binary.setValueCount(rows);
    vectors.add(largeUtf8);
    vectors.add(largeBinary);
    vectors.add(binary);

    LargeListVector largeList = LargeListVector.empty("large_list", allocator);
    largeList.addOrGetVector(FieldType.nullable(new ArrowType.Int(32, true)));
    IntVector items = (IntVector) largeList.getDataVector();
    long item = 0;
    for (int r = 0; r < rows; r++) {
      if ((r + b) % 4 == 2) {
        largeList.setNull(r);
        continue;
      }
      long start = largeList.startNewValue(r);
      int n = (r + b) % 3;
      for (int k = 0; k < n; k++) {
        if (k == 1) {
          items.setNull((int) (start + k));
        } else {
          items.setSafe((int) (start + k), r * 100 + k + b);
        }
      }
      item = start + n;
      largeList.endValue(r, n);
    }
    items.setValueCount((int) item);
    largeList.setValueCount(rows);
    vectors.add(largeList);

    MapVector map = MapVector.empty("map", allocator, false);
    UnionMapWriter writer = map.getWriter();
    for (int r = 0; r < rows; r++) {
      writer.setPosition(r);
      writer.startMap();
      for (int k = 0; k < (r + b) % 3; k++) {
        writer.startEntry();
        writer.key().integer().writeInt(k + r);
        writer.value().bigInt().writeBigInt(1_000_000_000_000L * (k + 1) + r + b);
        writer.endEntry();
      }
      writer.endMap();
    }
    writer.setValueCount(rows);
    vectors.add(map);

    ListVector listOfStructs = ListVector.empty("list_of_structs", allocator);
    listOfStructs.addOrGetVector(FieldType.nullable(ArrowType.Struct.INSTANCE));
    StructVector entries = (StructVector) listOfStructs.getDataVector();
    BigIntVector ea = entries.addOrGet("a", FieldType.nullable(new ArrowType.Int(64, true)), BigIntVector.class);
    VarCharVector eb = entries.addOrGet("b", FieldType.nullable(ArrowType.Utf8.INSTANCE), VarCharVector.class);
    int entry = 0;
    for (int r = 0; r < rows; r++) {
      if ((r + b) % 5 == 3) {
        listOfStructs.setNull(r);
        continue;
      }
      int start = listOfStructs.startNewValue(r);
      int n = (r + b) % 2 + 1;
      for (int k = 0; k < n; k++) {
        int at = start + k;
        if (k == 1 && r % 2 == 0) {
          entries.setNull(at);
        } else {
          entries.setIndexDefined(at);
          ea.setSafe(at, -r * 10L - k);
          eb.setSafe(at, ("s" + r + k).getBytes(StandardCharsets.UTF_8));
        }
      }
      entry = start + n;
      listOfStructs.endValue(r, n);
    }
    ea.setValueCount(entry);
    eb.setValueCount(entry);
    entries.setValueCount(entry);
    listOfStructs.setValueCount(rows);
    vectors.add(listOfStructs);

    StructVector struct = StructVector.empty("struct", allocator);
    IntVector sa = struct.addOrGet("a", FieldType.nullable(new ArrowType.Int(32, true)), IntVector.class);
    VarCharVector sb = struct.addOrGet("b", FieldType.nullable(ArrowType.Utf8.INSTANCE), VarCharVector.class);
    for (int r = 0; r < rows; r++) {
      if ((r + b) % 4 == 0) {
        struct.setNull(r);
        continue;
      }
      struct.setIndexDefined(r);
      sa.setSafe(r, r * 7 + b);
      if (r % 2 == 1) {
        sb.setNull(r);
      } else {
        sb.setSafe(r, WORDS[r % WORDS.length].getBytes(StandardCharsets.UTF_8));
      }
    }
    sa.setValueCount(rows);
    sb.setValueCount(rows);
    struct.setValueCount(rows);
    vectors.add(struct);

    try (VarCharVector plain = new VarCharVector("dictionary_words", allocator)) {
      for (int r = 0; r < rows; r++) {
        if ((r + b) % 3 == 2) {
          plain.setNull(r);
        } else {
          plain.setSafe(r, WORDS[(r * 3 + b) % WORDS.length].getBytes(StandardCharsets.UTF_8));
        }
      }
      plain.setValueCount(rows);
      vectors.add((SmallIntVector) DictionaryEncoder.encode(plain, dictionary));
    }
    return new VectorSchemaRoot(vectors);
  }
}
