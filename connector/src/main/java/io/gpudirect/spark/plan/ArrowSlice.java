package io.gpudirect.spark.plan;

import io.gpudirect.dataset.DataFile;

/**
 * Record batches [firstBatch, firstBatch + batchCount) of an Arrow IPC file, or, for a stream
 * (which cannot be split without reading it), every batch: batchCount is then -1.
 */
public record ArrowSlice(DataFile file, int firstBatch, int batchCount, long bytes) implements FileSlice {}
