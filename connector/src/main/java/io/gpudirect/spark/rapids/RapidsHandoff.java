package io.gpudirect.spark.rapids;

import ai.rapids.cudf.DType;
import ai.rapids.cudf.HostColumnVector;
import io.gpudirect.GpuDirectException;
import io.gpudirect.spark.DeviceHandoff;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Batches as the RAPIDS Accelerator's own scans make them: {@code GpuColumnVector}s over cuDF
 * columns, made after taking the plugin's GPU semaphore for the task. Device memory comes from
 * whatever RMM resource the plugin set up on the executor (cuDF allocates from the current
 * one); nothing here initialises RMM or a pool of its own.
 */
final class RapidsHandoff implements DeviceHandoff {
  private static final long serialVersionUID = 1L;
  private static final String COLUMN = "com.nvidia.spark.rapids.GpuColumnVector";
  private static final String BUILDER = "com.nvidia.spark.rapids.GpuColumnVector$GpuColumnarBatchBuilder";
  private static final String SEMAPHORE = "com.nvidia.spark.rapids.GpuSemaphore$";

  private final long targetBytes;
  private transient Plugin plugin;

  RapidsHandoff(long targetBytes) {
    this.targetBytes = targetBytes;
  }

  /** The plugin's spark.rapids.sql.batchSizeBytes as the plugin reads it, default included. */
  static long targetBatchBytes(SparkSession session) throws ReflectiveOperationException {
    Class<?> conf = RapidsPlugin.sqlClass("com.nvidia.spark.rapids.RapidsConf");
    Object rapids = conf.getConstructor(SQLConf.class).newInstance(session.sessionState().conf());
    return (Long) conf.getMethod("gpuTargetBatchSizeBytes").invoke(rapids);
  }

  /** The plugin's methods, looked up once per executor JVM's copy of this handoff. */
  private static final class Plugin {
    final Object semaphore;
    final Method acquire;
    final Method column;
    final Class<?> builder;

    Plugin() throws ReflectiveOperationException {
      Class<?> s = RapidsPlugin.sqlClass(SEMAPHORE);
      semaphore = s.getField("MODULE$").get(null);
      acquire = s.getMethod("acquireIfNecessary", TaskContext.class);
      column = RapidsPlugin.sqlClass(COLUMN).getMethod("from", ai.rapids.cudf.ColumnVector.class, DataType.class);
      builder = RapidsPlugin.sqlClass(BUILDER);
    }
  }

  private Plugin plugin() {
    if (plugin == null) {
      try {
        plugin = new Plugin();
      } catch (ReflectiveOperationException e) {
        throw new GpuDirectException("The RAPIDS Accelerator on this executor lacks what gpudirect's device"
            + " pass-through uses (" + e + "): run the plugin version the driver has (24.12.x)", e);
      }
    }
    return plugin;
  }

  @Override
  public void beforeGpuWork() {
    TaskContext task = TaskContext.get();
    if (task != null) {
      call(plugin().acquire, plugin().semaphore, task);
    }
  }

  @Override
  public ColumnarBatch fromDevice(ai.rapids.cudf.ColumnVector[] columns, int rows, StructType schema) {
    ColumnVector[] vectors = new ColumnVector[columns.length];
    try {
      for (int i = 0; i < columns.length; i++) {
        // The plugin's vector owns the reference it is given: ours stay the caller's.
        vectors[i] = wrap(columns[i].incRefCount(), schema.fields()[i].dataType());
      }
      return new ColumnarBatch(vectors, rows);
    } catch (RuntimeException e) {
      closeAll(vectors);
      throw e;
    }
  }

  /** The plugin's vector over {@code column}, which then owns it; closed here if that fails. */
  private ColumnVector wrap(ai.rapids.cudf.ColumnVector column, DataType type) {
    try {
      return (ColumnVector) call(plugin().column, null, column, type);
    } catch (RuntimeException e) {
      column.close();
      throw e;
    }
  }

  private static void closeAll(ColumnVector[] vectors) {
    for (ColumnVector v : vectors) {
      if (v != null) {
        v.close();
      }
    }
  }

  /**
   * Copies a batch read on the host with the plugin's own builder, except binary columns, which
   * its copy has no case for: those are built here as the LIST&lt;UINT8&gt; it holds them in.
   */
  @Override
  public ColumnarBatch fromHost(ColumnarBatch host, StructType schema) {
    int rows = host.numRows();
    List<Integer> copied = new ArrayList<>();
    StructType copiedSchema = new StructType();
    for (int i = 0; i < schema.fields().length; i++) {
      if (!(schema.fields()[i].dataType() instanceof BinaryType)) {
        copied.add(i);
        copiedSchema = copiedSchema.add(schema.fields()[i]);
      }
    }
    ColumnVector[] vectors = new ColumnVector[schema.fields().length];
    try {
      if (!copied.isEmpty()) {
        ColumnarBatch built = build(host, copied, copiedSchema, rows);
        for (int j = 0; j < copied.size(); j++) {
          vectors[copied.get(j)] = built.column(j);
        }
      }
      for (int i = 0; i < vectors.length; i++) {
        if (vectors[i] == null) {
          vectors[i] = wrap(byteLists(host.column(i), rows), DataTypes.BinaryType);
        }
      }
      return new ColumnarBatch(vectors, rows);
    } catch (RuntimeException e) {
      closeAll(vectors);
      throw e;
    }
  }

  private ColumnarBatch build(ColumnarBatch host, List<Integer> columns, StructType schema, int rows) {
    Object builder;
    try {
      builder = plugin().builder.getConstructor(StructType.class, int.class).newInstance(schema, rows);
    } catch (InvocationTargetException e) {
      throw unwrap(e);
    } catch (ReflectiveOperationException e) {
      throw new GpuDirectException("Cannot copy a host batch with the RAPIDS Accelerator's builder: " + e, e);
    }
    try (AutoCloseable closing = (AutoCloseable) builder) {
      Method copy = builder.getClass().getMethod("copyColumnar", ColumnVector.class, int.class, int.class);
      for (int j = 0; j < columns.size(); j++) {
        call(copy, builder, host.column(columns.get(j)), j, rows);
      }
      return (ColumnarBatch) call(builder.getClass().getMethod("build", int.class), builder, rows);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new GpuDirectException("Cannot copy a host batch with the RAPIDS Accelerator's builder: " + e, e);
    }
  }

  /** A host binary column as the LIST&lt;UINT8&gt; device column the plugin holds binary in. */
  private static ai.rapids.cudf.ColumnVector byteLists(ColumnVector binary, int rows) {
    try (HostColumnVector.ColumnBuilder b = new HostColumnVector.ColumnBuilder(
        new HostColumnVector.ListType(true, new HostColumnVector.BasicType(false, DType.UINT8)), rows)) {
      for (int r = 0; r < rows; r++) {
        if (binary.isNullAt(r)) {
          b.appendNull();
        } else {
          b.appendByteList(binary.getBinary(r));
        }
      }
      return b.buildAndPutOnDevice();
    }
  }

  @Override
  public long targetBatchBytes() {
    return targetBytes;
  }

  /** Hand-offs to the same batch size are alike, so that scans handed over by them compare equal. */
  @Override
  public boolean equals(Object o) {
    return o instanceof RapidsHandoff other && targetBytes == other.targetBytes;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(targetBytes);
  }

  private static Object call(Method m, Object target, Object... args) {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw unwrap(e);
    } catch (IllegalAccessException e) {
      throw new GpuDirectException("Cannot call the RAPIDS Accelerator's " + m + ": " + e, e);
    }
  }

  private static RuntimeException unwrap(InvocationTargetException e) {
    Throwable t = e.getCause();
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error err) {
      throw err;
    }
    return new GpuDirectException("The RAPIDS Accelerator failed: " + t, t);
  }
}
