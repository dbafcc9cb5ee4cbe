package io.gpudirect.spark.arrow;

import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.arrow.BatchSource;
import io.gpudirect.arrow.BoundedMessageReader;
import io.gpudirect.arrow.Failures;
import io.gpudirect.arrow.FileFooter;
import io.gpudirect.arrow.GuardedFileReader;
import io.gpudirect.arrow.GuardedStreamReader;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;

/**
 * One Arrow IPC file or stream, read through a {@link SeekableByteChannel} (in production a
 * channel over a remote file) into Spark {@code ColumnarBatch}es.
 *
 * <p>Bodies are read by Arrow Java into buffers of this file's own allocator (one copy,
 * from the channel); Spark columns then read those buffers in place. Arrow types with a
 * Spark twin use Spark's {@code ArrowColumnVector}; the others convert on access, by the
 * table in {@code docs/arrow-type-mapping.md}.
 *
 * <p>Planning: the file format lists its record batches in the footer, so a planner can
 * split a file into partitions of consecutive batches ({@link #recordBatchCount()},
 * {@link #recordBatchBytes(int)}). A stream cannot be planned without reading all of it,
 * so a stream is always one partition: {@link #readBatches} returns all of its batches.
 *
 * <p>Input is hostile until checked: footer blocks and stream message lengths are checked
 * against the channel's size, every loaded batch passes Arrow's full validation before
 * Spark sees it, and all buffers come from a child allocator limited to a few times the
 * file size, so a lying length cannot exhaust memory. Every failure is an
 * {@link ArrowFormatException} naming the file.
 *
 * <p>Ownership: this object owns the channel and closes it. One batch reader at a time.
 * Not thread-safe.
 */
public final class ArrowIpcFile implements AutoCloseable {
  /** Headroom over the file size: two batch bodies in flight, dictionaries, synthesized validity buffers. */
  private static final long SIZE_FACTOR = 4;
  private static final long MIN_LIMIT = 16L << 20;

  private final String displayName;
  private final boolean streamFormat;
  private final BufferAllocator allocator;
  private final ArrowReader reader;
  private final SeekableByteChannel channel;
  private final List<ArrowBlock> recordBlocks;
  private final StructType sparkSchema;
  private ArrowBatchReader batches;
  private boolean closed;

  private ArrowIpcFile(String displayName, boolean streamFormat, BufferAllocator allocator,
      ArrowReader reader, SeekableByteChannel channel, List<ArrowBlock> recordBlocks, StructType sparkSchema) {
    this.displayName = displayName;
    this.channel = channel;
    this.streamFormat = streamFormat;
    this.allocator = allocator;
    this.reader = reader;
    this.recordBlocks = recordBlocks;
    this.sparkSchema = sparkSchema;
  }

  /**
   * Opens {@code channel} and reads its schema (and, for the file format, its footer).
   *
   * @param displayName how errors name the file, e.g. {@code gpudirect://host:7337/data/x.arrow}
   * @param streamFormat true for the IPC stream format ({@code .arrows}), false for the file format
   * @param allocator the parent of this file's own, size-limited allocator
   * @throws ArrowFormatException when the data is not readable Arrow IPC; the channel is closed then
   */
  public static ArrowIpcFile open(SeekableByteChannel channel, String displayName, boolean streamFormat,
      BufferAllocator allocator) {
    BufferAllocator fileAllocator = null;
    ArrowReader reader = null;
    try {
      long size = channel.size();
      long limit = Math.min(allocator.getLimit(), Math.max(MIN_LIMIT, multiplyCapped(size, SIZE_FACTOR)));
      fileAllocator = allocator.newChildAllocator("arrow-ipc " + displayName, 0, limit);
      if (streamFormat) {
        GuardedStreamReader stream = new GuardedStreamReader(
            new BoundedMessageReader(channel, size, fileAllocator, displayName), fileAllocator, displayName,
            written -> SparkTypeMapping.sparkSchema(written, displayName));
        reader = stream;
        StructType schema = SparkTypeMapping.sparkSchema(stream.writtenSchema(), displayName);
        return new ArrowIpcFile(displayName, true, fileAllocator, reader, channel, List.of(), schema);
      }
      ArrowFooter footer = FileFooter.read(channel, size, displayName);
      Schema written = footer.getSchema();
      StructType schema = SparkTypeMapping.sparkSchema(written, displayName);
      List<ArrowBlock> dictionaries = footer.getDictionaries();
      for (int i = 0; i < dictionaries.size(); i++) {
        FileFooter.checkBlockMessage(channel, dictionaries.get(i), "dictionary batch " + i, displayName);
      }
      reader = new GuardedFileReader(channel, fileAllocator, displayName);
      return new ArrowIpcFile(displayName, false, fileAllocator, reader, channel, footer.getRecordBatches(),
          schema);
    } catch (Exception | StackOverflowError e) {
      closeQuietly(reader, fileAllocator, channel, e);
      throw Failures.named(displayName, "cannot open it", e);
    }
  }

  /** The Spark schema of the data, after the type mapping; field order as written. */
  public StructType sparkSchema() {
    return sparkSchema;
  }

  public String displayName() {
    return displayName;
  }

  public boolean isStream() {
    return streamFormat;
  }

  /** The record batches the file's footer lists. Not known for a stream without reading it all. */
  public int recordBatchCount() {
    requireFileFormat("recordBatchCount");
    return recordBlocks.size();
  }

  /** Metadata plus body bytes of record batch {@code i}, from the footer, for split planning. */
  public long recordBatchBytes(int i) {
    requireFileFormat("recordBatchBytes");
    ArrowBlock block = recordBlocks.get(i);
    return block.getMetadataLength() + block.getBodyLength();
  }

  /**
   * Reads record batches {@code [fromBatch, toBatchExclusive)} of the file format, or all
   * batches of a stream (the range is then ignored: a stream is one partition), as columns
   * {@code requiredSchema}: top-level fields of {@link #sparkSchema()}, by name, in its order.
   */
  public ArrowBatchReader readBatches(int fromBatch, int toBatchExclusive, StructType requiredSchema) {
    if (closed) {
      throw new IllegalStateException(displayName + " is closed");
    }
    if (batches != null && !batches.isClosed()) {
      throw new IllegalStateException("a batch reader of " + displayName + " is still open");
    }
    if (!streamFormat && (fromBatch < 0 || fromBatch > toBatchExclusive || toBatchExclusive > recordBlocks.size())) {
      throw new IllegalArgumentException("record batches [" + fromBatch + ", " + toBatchExclusive + ") of "
          + displayName + ", which has " + recordBlocks.size());
    }
    int[] columns = ColumnSelection.indices(sparkSchema, requiredSchema, displayName);
    BatchSource source = streamFormat
        ? new BatchSource.Stream(reader)
        : new BatchSource.File((GuardedFileReader) reader, channel,
            recordBlocks.subList(fromBatch, toBatchExclusive), fromBatch, displayName);
    batches = new ArrowBatchReader(source, requiredSchema, columns, displayName);
    return batches;
  }

  /** Releases all Arrow memory of this file, closes the channel, and closes an open batch reader. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (batches != null) {
      batches.close();
    }
    try {
      reader.close();
    } catch (IOException | RuntimeException e) {
      allocator.close();
      throw Failures.named(displayName, "cannot close it", e);
    }
    allocator.close();
  }

  private void requireFileFormat(String what) {
    if (streamFormat) {
      throw new UnsupportedOperationException(what + " of " + displayName
          + ": an Arrow IPC stream cannot be split; read it as one partition");
    }
  }

  private static long multiplyCapped(long a, long b) {
    return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
  }

  private static void closeQuietly(ArrowReader reader, BufferAllocator allocator, SeekableByteChannel channel,
      Throwable failure) {
    try {
      if (reader != null) {
        reader.close();
      }
      channel.close();
      if (allocator != null) {
        allocator.close();
      }
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}
