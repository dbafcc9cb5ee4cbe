package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import java.math.BigInteger;
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
  /** Spark's estimate of a row's overhead, in bytes, beside its columns' default sizes. */
  private static final int ROW_OVERHEAD = 8;
  private final long sizeInBytes;
  private final OptionalLong numRows;

  private ScanStatistics(long sizeInBytes, OptionalLong numRows) {
    this.sizeInBytes = sizeInBytes;
    this.numRows = numRows;
  }

  /**
   * The size Spark's planner gives a projection of {@code spark.read.parquet} of the same files
   * (its V1 file relation: {@code HadoopFsRelation.sizeInBytes}, then
   * {@code SizeInBytesOnlyStatsPlanVisitor} over the projection): the bytes of the listed files,
   * times {@code spark.sql.sources.fileCompressionFactor}, scaled by the row size of the columns
   * read over that of all columns, each counting Spark's 8 bytes of row overhead
   * ({@code EstimationUtils.getSizePerRow}). Spark's V2 file scans leave the overhead out, which
   * made narrow reads look up to half as large and tables broadcast that the local scan shuffles.
   * Neither pushed filters nor partition filters shrink it, as over a path (only a catalog table's
   * partitions are pruned in its statistics). Rows come from Parquet footers, which planning reads
   * anyway; an Arrow IPC footer does not hold batch lengths, so Arrow scans report none.
   */
  static ScanStatistics of(ScanContext context, StructType tableSchema, StructType readSchema) {
    long fileBytes = 0;
    for (DataFile f : context.files) {
      fileBytes += f.length();
    }
    double factor = context.session.sessionState().conf().fileCompressionFactor();
    BigInteger size = BigInteger.valueOf((long) (fileBytes * factor))
        .multiply(BigInteger.valueOf(ROW_OVERHEAD + readSchema.defaultSize()))
        .divide(BigInteger.valueOf(ROW_OVERHEAD + tableSchema.defaultSize()));
    return new ScanStatistics(Math.max(1, size.longValue()), context.arrow ? OptionalLong.empty() : parquetRows(context));
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
