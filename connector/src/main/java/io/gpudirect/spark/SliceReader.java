package io.gpudirect.spark;

import java.io.Closeable;
import java.io.IOException;

/** Reads the rows or batches of one slice; {@link GpuDirectPartitionReader} chains them. */
interface SliceReader<T> extends Closeable {
  boolean next() throws IOException;

  T get();
}
