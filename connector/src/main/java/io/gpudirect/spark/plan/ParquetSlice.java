package io.gpudirect.spark.plan;

import io.gpudirect.dataset.DataFile;
import java.util.Map;
import org.apache.parquet.filter2.predicate.FilterPredicate;

/**
 * Consecutive row groups of one Parquet file: the byte range [start, start + length) holds
 * them whole, which is how Parquet readers select row groups (by their midpoint).
 *
 * @param predicate the pushed filters converted against this file's schema, or null
 * @param sparkMetadata the footer's org.apache.spark.* entries, which say how dates and
 *     timestamps were written (rebase modes), so executors need not read the footer to know
 * @param createdBy the footer's writer, which decides INT96 time-zone conversion
 * @param chunkRanges offset and length pairs, in file order, of the column chunks the scan's
 *     columns need in these row groups (what the reader will fetch, for read-ahead); null
 *     when not known
 */
public record ParquetSlice(DataFile file, long start, long length, int rowGroups, long rows,
    FilterPredicate predicate, Map<String, String> sparkMetadata, String createdBy, long[] chunkRanges)
    implements FileSlice {

  public ParquetSlice(DataFile file, long start, long length, int rowGroups, long rows,
      FilterPredicate predicate, Map<String, String> sparkMetadata, String createdBy) {
    this(file, start, length, rowGroups, rows, predicate, sparkMetadata, createdBy, null);
  }

  @Override
  public long bytes() {
    return length;
  }
}
