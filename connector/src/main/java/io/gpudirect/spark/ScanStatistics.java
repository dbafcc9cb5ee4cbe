package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import java.util.OptionalLong;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.types.StructType;

/**
 * What a scan tells Spark's planner about its size, so that a small table is broadcast as it
 * would be over Spark's own file sources. Without it Spark takes every gpudirect table to be
 * {@code spark.sql.defaultSizeInBytes} (8 EiB) and plans sort-merge joins.
 */
final class ScanStatistics implements Statistics {
  private final long sizeInBytes;
  private final OptionalLong numRows;

  private ScanStatistics(long sizeInBytes, OptionalLong numRows) {
    this.sizeInBytes = sizeInBytes;
    this.numRows = numRows;
  }

  /**
   * Spark's rule for file scans ({@code FileScan.estimateStatistics}): the bytes of the files
   * read, times {@code spark.sql.sources.fileCompressionFactor}, scaled by the share of the
   * columns read (by their default sizes). Pushed filters do not shrink it, as in Spark: row
   * groups they skip are only known once every footer is read, and Spark's plans do not count
   * on them either. Rows come from Parquet footers, which planning reads anyway; an Arrow IPC
   * footer does not hold batch lengths, so Arrow scans report none (nor does Spark's Parquet).
   */
  static ScanStatistics of(ScanContext context, StructType dataSchema, StructType readSchema) {
    long fileBytes = 0;
    for (DataFile f : context.files) {
      fileBytes += f.length();
    }
    double factor = context.session.sessionState().conf().fileCompressionFactor();
    long size = dataSchema.defaultSize() == 0 ? (long) (factor * fileBytes)
        : (long) (factor * fileBytes / dataSchema.defaultSize() * readSchema.defaultSize());
    return new ScanStatistics(Math.max(1, size), context.arrow ? OptionalLong.empty() : parquetRows(context));
  }

  private static OptionalLong parquetRows(ScanContext context) {
    long rows = 0;
    try {
      for (DataFile f : context.files) {
        for (BlockMetaData b : context.parquet().footer(f).getBlocks()) {
          rows += b.getRowCount();
        }
      }
    } catch (GpuDirectException e) {
      // Statistics are advice: planning reads the same footer next and fails the query with
      // this error, where it always did.
      return OptionalLong.empty();
    }
    return OptionalLong.of(rows);
  }

  @Override
  public OptionalLong sizeInBytes() {
    return OptionalLong.of(sizeInBytes);
  }

  @Override
  public OptionalLong numRows() {
    return numRows;
  }

  @Override
  public String toString() {
    return "sizeInBytes=" + sizeInBytes + (numRows.isPresent() ? " rows=" + numRows.getAsLong() : "");
  }
}
