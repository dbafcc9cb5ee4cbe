package io.gpudirect.spark.shuffle;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A RAPIDS Accelerator shuffle record kept alive for a writer thread. The plugin's exchange hands
 * the writer each map output's partitions as slices of one host batch ({@code
 * SlicedGpuColumnVector}s over a cuDF {@code HostColumnVector} per column) and frees that batch
 * when the next is asked for; a reference of the writer's own ({@code incRefCount}, as the
 * plugin's MULTITHREADED writer takes) keeps the slice's memory until a writer thread has
 * serialized it, so that the task's thread only partitions. Closing gives that reference back;
 * the plugin's own close gives back the other.
 *
 * <p>The plugin's classes are reached through the record's own column class, whatever loaded
 * it (the plugin's shims come from a class loader of their own), so nothing here links to the
 * plugin, and without it no record is ever retained.
 */
final class RetainedBatch implements AutoCloseable {
  private static final String SLICED = "com.nvidia.spark.rapids.SlicedGpuColumnVector";
  private static final ClassValue<Sliced> SLICED_CLASSES = new ClassValue<>() {
    @Override
    protected Sliced computeValue(Class<?> type) {
      return type.getName().equals(SLICED) ? new Sliced(type) : null;
    }
  };

  /** Those made and not yet closed in this JVM: none once every task that retained is done. */
  private static final AtomicLong HELD = new AtomicLong();

  private final ColumnarBatch batch;
  private final long bytes;

  private RetainedBatch(ColumnarBatch batch, long bytes) {
    this.batch = batch;
    this.bytes = bytes;
    HELD.incrementAndGet();
  }

  /** How many this JVM holds now (tests: a failing task must leave none). */
  static long held() {
    return HELD.get();
  }

  /**
   * {@code value} with a reference of its own, where it is one of the plugin's sliced host
   * batches (or a batch of rows without columns, which holds no memory); otherwise null: the
   * caller must be done with the value before its iterator moves on.
   */
  static RetainedBatch retain(Object value) {
    if (!(value instanceof ColumnarBatch batch)) {
      return null;
    }
    if (batch.numCols() == 0) {
      return new RetainedBatch(batch, 0);
    }
    Sliced sliced = SLICED_CLASSES.get(batch.column(0).getClass());
    return sliced == null ? null : sliced.retain(batch);
  }

  /** The value to serialize. */
  ColumnarBatch batch() {
    return batch;
  }

  /** The host memory of the slice's rows, as the plugin counts it for its own writer's bound. */
  long bytes() {
    return bytes;
  }

  @Override
  public void close() {
    HELD.decrementAndGet();
    batch.close();
  }

  /** The plugin's static methods on its sliced column class. */
  private static final class Sliced {
    private final MethodHandle incRefCount;
    private final MethodHandle hostBytes;

    Sliced(Class<?> type) {
      try {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        incRefCount = lookup.findStatic(type, "incRefCount", MethodType.methodType(ColumnarBatch.class, ColumnarBatch.class));
        hostBytes = lookup.findStatic(type, "getTotalHostMemoryUsed", MethodType.methodType(long.class, ColumnarBatch.class));
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("The RAPIDS Accelerator's " + SLICED + " lacks what gpudirect's threaded"
            + " shuffle writer uses (" + e + "): run the plugin version it was built against (24.12.x), or set "
            + ExecutorShuffle.WRITE_THREADS + "=0", e);
      }
    }

    /** Only for a batch whose columns are all of this class, as the plugin's exchange makes them. */
    RetainedBatch retain(ColumnarBatch batch) {
      for (int i = 1; i < batch.numCols(); i++) {
        if (batch.column(i).getClass() != batch.column(0).getClass()) {
          return null;
        }
      }
      try {
        long bytes = (long) hostBytes.invokeExact(batch);
        return new RetainedBatch((ColumnarBatch) incRefCount.invokeExact(batch), bytes);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new IllegalStateException("Keeping a RAPIDS Accelerator batch for a writer thread: " + e, e);
      }
    }
  }
}
