package io.gpudirect.spark.plan;

import io.gpudirect.dataset.DataFile;
import java.io.Serializable;

/**
 * A unit of reading: whole Parquet row groups or whole Arrow record batches of one file.
 * Slices are what partitions are packed from.
 */
public interface FileSlice extends Serializable {
  DataFile file();

  /** Bytes this slice fetches at most; what partitions are packed by. */
  long bytes();
}
