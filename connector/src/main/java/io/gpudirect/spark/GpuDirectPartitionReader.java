package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.hadoop.GpuDirectFileSystem;
import io.gpudirect.remote.TaskFetchCounters;
import io.gpudirect.spark.plan.FileSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import io.gpudirect.spark.read.SliceReader;
import io.gpudirect.spark.read.UnconvertibleColumn;
import java.io.IOException;
import java.util.Iterator;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;

/**
 * Reads a partition's slices one after another. Any failure is rethrown naming the file it
 * came from; the current slice is closed before the next opens, and on close.
 */
final class GpuDirectPartitionReader<T> implements PartitionReader<T> {
  /** Opens the reader of one slice. */
  interface Opener<T> {
    SliceReader<T> open(FileSlice slice) throws Exception;
  }

  private final Iterator<FileSlice> slices;
  private final Opener<T> opener;
  private final long transportFlag;
  private final long startBytes = TaskFetchCounters.bytes();
  private final long startNanos = TaskFetchCounters.nanos();
  private final FileSystem.Statistics inputBytes = GpuDirectFileSystem.readStatistics();
  private final long startCounted = inputBytes.getThreadStatistics().getBytesRead();
  private FileSlice slice;
  private SliceReader<T> current;

  GpuDirectPartitionReader(GpuDirectPartition partition, Opener<T> opener, String transport) {
    this.slices = partition.slices().iterator();
    this.opener = opener;
    this.transportFlag = ScanMetrics.transportFlag(transport);
  }

  @Override
  public boolean next() throws IOException {
    while (true) {
      if (current == null) {
        if (!slices.hasNext()) {
          return false;
        }
        slice = slices.next();
        current = guard(() -> opener.open(slice));
        countInputBytes(); // a GPU decode fetched its slice as it opened it
      }
      if (guard(current::next)) {
        return true;
      }
      closeCurrent();
      countInputBytes();
    }
  }

  /**
   * Brings this thread's count in the gpudirect scheme's Hadoop statistics up to the bytes this
   * partition fetched. Spark sets a task's input bytes from those statistics alone; reads
   * through the Hadoop streams count there themselves, but a GPU decode fetches through its own
   * source, and its bytes showed as "input 0 B" for 180 M rows. Once a slice, not once a row:
   * Spark reads the statistics every thousand rows and at the end.
   */
  private void countInputBytes() {
    long fetched = TaskFetchCounters.bytes() - startBytes;
    long counted = inputBytes.getThreadStatistics().getBytesRead() - startCounted;
    if (fetched > counted) {
      inputBytes.incrementBytesRead(fetched - counted);
    }
  }

  @Override
  public T get() {
    return current.get();
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    long bytes = TaskFetchCounters.bytes() - startBytes;
    long nanos = TaskFetchCounters.nanos() - startNanos;
    return new CustomTaskMetric[] {
        ScanMetrics.value(ScanMetrics.BYTES_FETCHED, bytes),
        ScanMetrics.value(ScanMetrics.FETCH_TIME, nanos),
        ScanMetrics.value(ScanMetrics.FETCH_THROUGHPUT, nanos == 0 ? 0 : (long) (bytes * 1e9 / nanos)),
        ScanMetrics.value(ScanMetrics.TRANSPORT, transportFlag)};
  }

  @Override
  public void close() throws IOException {
    closeCurrent();
  }

  private void closeCurrent() throws IOException {
    if (current != null) {
      SliceReader<T> c = current;
      current = null;
      c.close();
    }
  }

  private interface Step<R> {
    R run() throws Exception;
  }

  private <R> R guard(Step<R> step) throws IOException {
    try {
      return step.run();
    } catch (GpuDirectException e) {
      if (slice.file().uri().toString().equals(e.file())) {
        throw e;
      }
      throw failure(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("Interrupted while reading " + slice.file().uri());
    } catch (Exception | OutOfMemoryError | StackOverflowError e) {
      throw failure(e);
    }
  }

  private GpuDirectException failure(Throwable e) {
    closeQuietly();
    String file = slice.file().uri().toString();
    String message = UnconvertibleColumn.message(file, e).orElse("Cannot read " + file + ": " + e);
    return new GpuDirectException(file, message, e);
  }

  private void closeQuietly() {
    try {
      closeCurrent();
    } catch (IOException | RuntimeException suppressed) {
      // The original failure is what the user needs to see.
    }
  }
}
