package io.gpudirect.spark.read;

import java.io.Closeable;
import java.io.IOException;

/**
 * Reads the rows or batches of one slice; the Spark partition reader
 * ({@code GpuDirectPartitionReader}) chains them.
 */
public interface SliceReader<T> extends Closeable {
  boolean next() throws IOException;

  T get();
}
