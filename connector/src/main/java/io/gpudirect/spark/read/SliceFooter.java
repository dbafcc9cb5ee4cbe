package io.gpudirect.spark.read;

import ai.rapids.cudf.DataSource;
import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.GpuDirectException;
import io.gpudirect.spark.plan.ParquetSlice;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Util;

/**
 * The footer of a Parquet file cut down to the row groups of one slice, as the tail of a
 * {@link io.gpudirect.spark.cudf.RowGroupView}. A row group belongs to the slice whose byte
 * range holds its midpoint, the rule Spark's own Parquet reader applies, so every row group
 * is read by exactly one slice.
 */
final class SliceFooter {
  private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

  /** The replacement tail: footer, its length, "PAR1". */
  final byte[] tail;
  /** The file's top-level columns by name, in file order. */
  final Map<String, SchemaElement> columns = new LinkedHashMap<>();

  private SliceFooter(byte[] tail, List<SchemaElement> schema) {
    this.tail = tail;
    // The schema is a depth-first list: the root, then each top-level field and its subtree.
    int at = 1;
    for (int i = 0; i < schema.get(0).getNum_children(); i++) {
      columns.put(schema.get(at).getName(), schema.get(at));
      at = skip(schema, at);
    }
  }

  private static int skip(List<SchemaElement> schema, int at) {
    int children = schema.get(at).isSetNum_children() ? schema.get(at).getNum_children() : 0;
    at++;
    for (int i = 0; i < children; i++) {
      at = skip(schema, at);
    }
    return at;
  }

  /** Reads {@code length} bytes of the file at {@code offset}. */
  interface FileBytes {
    long size();

    byte[] read(long offset, int length) throws IOException;
  }

  /** The footer of {@code file} cut down to the row groups of {@code slice}. */
  static SliceFooter of(DataSource file, ParquetSlice slice) throws IOException {
    return of(new FileBytes() {
      @Override
      public long size() {
        return file.size();
      }

      @Override
      public byte[] read(long offset, int length) throws IOException {
        return bytes(file, offset, length);
      }
    }, slice);
  }

  static SliceFooter of(FileBytes file, ParquetSlice slice) throws IOException {
    FileMetaData footer = read(file, slice);
    List<RowGroup> kept = new ArrayList<>();
    long rows = 0;
    for (RowGroup group : footer.getRow_groups()) {
      long start = start(group);
      long mid = start + compressedSize(group) / 2;
      if (mid >= slice.start() && mid < slice.start() + slice.length()) {
        kept.add(group);
        rows += group.getNum_rows();
      }
    }
    footer.setRow_groups(kept);
    footer.setNum_rows(rows);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Util.writeFileMetaData(footer, out);
    int length = out.size();
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(length).array());
    out.write(MAGIC);
    try {
      return new SliceFooter(out.toByteArray(), footer.getSchema());
    } catch (RuntimeException e) {
      throw new GpuDirectException(slice.file().uri().toString(), "Cannot read " + slice.file().uri()
          + ": malformed Parquet schema: " + e, e);
    }
  }

  private static FileMetaData read(FileBytes file, ParquetSlice slice) throws IOException {
    long size = file.size();
    String where = slice.file().uri().toString();
    if (size < 12) {
      throw new GpuDirectException(where, "Cannot read " + where + ": " + size + " bytes is too short for Parquet",
          null);
    }
    byte[] end = file.read(size - 8, 8);
    if (!java.util.Arrays.equals(MAGIC, 0, 4, end, 4, 8)) {
      throw new GpuDirectException(where, "Cannot read " + where + " on the GPU: no PAR1 footer"
          + " (an encrypted footer, PARE, is not read on the GPU)", null);
    }
    long length = ByteBuffer.wrap(end, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL;
    if (length > size - 12) {
      throw new GpuDirectException(where, "Cannot read " + where + ": its footer claims " + length
          + " bytes of a " + size + "-byte file", null);
    }
    try {
      return Util.readFileMetaData(new ByteArrayInputStream(file.read(size - 8 - length, (int) length)));
    } catch (IOException | RuntimeException e) {
      throw new GpuDirectException(where, "Cannot read " + where + ": corrupt Parquet footer: " + e.getMessage(), e);
    }
  }

  private static byte[] bytes(DataSource file, long offset, int length) throws IOException {
    byte[] out = new byte[length];
    try (HostMemoryBuffer b = file.hostRead(offset, length)) {
      if (b.getLength() != length) {
        throw new GpuDirectException("Short read of " + length + " bytes at " + offset);
      }
      b.getBytes(out, 0, 0, length);
    }
    return out;
  }

  /** Where a row group's first page starts: its first column's dictionary or data page. */
  private static long start(RowGroup group) {
    ColumnMetaData first = group.getColumns().get(0).getMeta_data();
    long start = first.getData_page_offset();
    if (first.isSetDictionary_page_offset() && first.getDictionary_page_offset() > 0) {
      start = Math.min(start, first.getDictionary_page_offset());
    }
    return start;
  }

  private static long compressedSize(RowGroup group) {
    long total = 0;
    for (ColumnChunk c : group.getColumns()) {
      total += c.getMeta_data().getTotal_compressed_size();
    }
    return total;
  }
}
