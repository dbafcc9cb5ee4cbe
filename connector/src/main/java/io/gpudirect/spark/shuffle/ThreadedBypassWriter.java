package io.gpudirect.spark.shuffle;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.Checksum;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.executor.ShuffleWriteMetrics;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.ShufflePartitionWriter;
import org.apache.spark.shuffle.api.WritableByteChannelWrapper;
import org.apache.spark.shuffle.checksum.ShuffleChecksumSupport;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.DiskBlockObjectWriter;
import org.apache.spark.storage.FileSegment;
import org.apache.spark.storage.TempShuffleBlockId;
import org.apache.spark.util.Utils;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Spark's bypass-merge-sort shuffle writer with its partitions' compression, checksums and disk
 * writes on the executor's writer threads ({@code spark.gpudirect.shuffle.writeThreads}), as the
 * RAPIDS Accelerator's multithreaded writer does: on the GPU hosts its pool won the map phase
 * (4.5 s against 5.5 s for Spark's writer, the rest of the job ours). The parts are Spark's:
 * the dependency's serializer, a {@link DiskBlockObjectWriter} per partition (Spark's codec,
 * encryption, shuffle checksums and write metrics), the {@link ShuffleMapOutputWriter} that
 * joins the partitions' files into the map output and its index, and the map status.
 *
 * <p>The task's thread pulls the records, partitions them and serializes each into its
 * partition's staging chunk, since a record may be an object the iterator reuses or frees at its
 * next step (Spark SQL's rows are not copied for a sort-based manager; the plugin closes a
 * device batch once the next is asked for); each full chunk goes to the partition's writer
 * thread, which compresses and writes the chunks in order and gives them back for the task's
 * next bytes. The bytes staged, and those handed over and not yet written, are bounded
 * ({@link #IN_FLIGHT} each), so a slow disk holds the task back rather than the heap filling.
 *
 * <p>The RAPIDS Accelerator's host batches are the exception: a task whose first record is one
 * ({@link RetainedBatch}) keeps a reference to each and hands it to the partition's thread, which
 * serializes it there as well, as the plugin's own MULTITHREADED writer does, so the task's thread
 * only partitions; their host memory not yet serialized is bounded by {@link #IN_FLIGHT} in the
 * same way. A record of that task that cannot be kept is serialized on the task's thread into
 * bytes of its own, which the partition's thread writes between the others (the serializer must
 * allow its records' bytes to be relocated, as the plugin's does).
 */
final class ThreadedBypassWriter<K, V> extends ShuffleWriter<K, V> implements ShuffleChecksumSupport {
  /**
   * Serialized bytes of one partition handed to its writer thread at once, at most: a quarter of
   * G1's smallest region, so that no chunk is a humongous object. (The chunks of 2026-12-06's
   * first form grew past their 256 KiB to 512 KiB arrays, half of the 1 MiB regions of an
   * executor's 1.5 GiB heap: every hand-over was a humongous allocation.)
   */
  static final int CHUNK = 256 << 10;
  /**
   * Serialized bytes of one task handed over and not yet written, at most; and, divided among its
   * partitions, staged and not yet handed over (a chunk of 32 KiB up to {@link #CHUNK} each).
   */
  static final int IN_FLIGHT = 32 << 20;
  private static final ClassTag<Object> ANY = ClassTag$.MODULE$.Any();

  private final BlockManager blocks;
  private final ShuffleDependency<K, V, V> dependency;
  private final long mapId;
  private final ShuffleWriteMetricsReporter metrics;
  private final ShuffleExecutorComponents components;
  private final ExecutorService[] threads;
  /** The executor's count of records its writer threads serialized from a retained reference. */
  private final LongAdder retainedRecords;
  private final SparkConf conf;
  private final Semaphore inFlight = new Semaphore(IN_FLIGHT);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  /** Chunks the writer threads have written, for the next bytes: a task makes as many as it holds at once. */
  private final ConcurrentLinkedQueue<byte[]> spareChunks = new ConcurrentLinkedQueue<>();
  /** The size of this task's chunks: {@link #CHUNK}, less where many partitions share {@link #IN_FLIGHT}. */
  private int chunkSize;
  private SerializerInstance serializer;
  private List<Lane> lanes;
  private Checksum[] checksums;
  private long[] lengths;
  private MapStatus status;
  private boolean stopping;

  ThreadedBypassWriter(BlockManager blocks, ShuffleDependency<K, V, V> dependency, long mapId,
      ShuffleWriteMetricsReporter metrics, ShuffleExecutorComponents components, ExecutorService[] threads,
      LongAdder retainedRecords, SparkConf conf) {
    this.blocks = blocks;
    this.dependency = dependency;
    this.mapId = mapId;
    this.metrics = metrics;
    this.components = components;
    this.threads = threads;
    this.retainedRecords = retainedRecords;
    this.conf = conf;
  }

  /**
   * One reduce partition: its staged bytes and the task's serializer stream over them, its Spark
   * writer and thread, and the serializer stream its thread writes retained records through.
   */
  private final class Lane {
    final Staging staging = new Staging(this);
    final DiskBlockObjectWriter writer;
    final ShuffleWriteMetrics written = new ShuffleWriteMetrics();
    final ExecutorService thread;
    Future<?> last = CompletableFuture.completedFuture(null);
    FileSegment segment;
    /** The task thread's, made at its first staged record (a serializer may write a header). */
    private SerializationStream staged;
    /** The lane thread's, over the writer, made there at its first retained record. */
    private SerializationStream direct;

    Lane(int partition) {
      Tuple2<TempShuffleBlockId, File> block = blocks.diskBlockManager().createTempShuffleBlock();
      writer = blocks.getDiskWriter(block._1(), block._2(), SerializedBytes.INSTANCE,
          (int) conf.getSizeAsKb("spark.shuffle.file.buffer", "32k") * 1024, written);
      if (checksums.length > 0) {
        writer.setChecksum(checksums[partition]);
      }
      // Spread one task's partitions over the threads, and the tasks' first partitions too.
      thread = threads[(int) Math.floorMod(partition + mapId, (long) threads.length)];
    }

    /** Task thread: the record serialized here, into this partition's staged bytes. */
    void stage(Object key, Object value) {
      if (staged == null) {
        staged = serializer.serializeStream(staging);
      }
      staged.writeKey(key, ANY);
      staged.writeValue(value, ANY);
    }

    /**
     * Hands the first {@code length} bytes of {@code chunk} to this partition's thread, waiting
     * while too many are in flight; the chunk comes back to the spares once written.
     */
    void handOver(byte[] chunk, int length) throws InterruptedException {
      inFlight.acquire(length);
      onThread(() -> writer.write(chunk, 0, length), () -> {
        spareChunks.add(chunk);
        inFlight.release(length);
      });
    }

    /**
     * Hands a retained record to this partition's thread, which serializes it and then gives the
     * reference back, waiting while too much retained memory is in flight.
     */
    void handOver(Object key, RetainedBatch record) throws InterruptedException {
      int charge = charge(record.bytes());
      try {
        inFlight.acquire(charge);
      } catch (InterruptedException e) {
        record.close();
        throw e;
      }
      onThread(() -> {
        if (direct == null) {
          direct = dependency.serializer().newInstance().serializeStream(new UnclosedWriter(writer));
        }
        direct.writeKey(key, ANY);
        direct.writeValue(record.batch(), ANY);
        retainedRecords.increment();
      }, () -> {
        record.close();
        inFlight.release(charge);
      });
    }

    /** A record serialized apart on the task's thread, written between the retained ones. */
    void handOver(byte[] serialized) throws InterruptedException {
      int charge = charge(serialized.length);
      inFlight.acquire(charge);
      onThread(() -> {
        if (direct != null) {
          direct.flush();
        }
        writer.write(serialized, 0, serialized.length);
      }, () -> inFlight.release(charge));
    }

    /** Closes the records' streams (their last bytes handed over) and commits the file on the thread. */
    void finish() throws IOException {
      if (staged != null) {
        staged.close();
      }
      staging.handOverRest();
      onThread(() -> {
        if (direct != null) {
          direct.close();
        }
        segment = writer.commitAndGet();
        writer.close();
      }, () -> { });
    }

    /**
     * {@code work} on this partition's thread, after the work handed to it before, unless this
     * task has failed; {@code release} after it either way, even where the thread is gone.
     */
    private void onThread(ThrowingRunnable work, Runnable release) {
      try {
        last = thread.submit(() -> {
          try {
            if (failure.get() == null) {
              work.run();
            }
          } catch (Throwable t) {
            failure.compareAndSet(null, t);
          } finally {
            release.run();
          }
        });
      } catch (RejectedExecutionException e) {
        release.run();
        throw e;
      }
    }
  }

  /** What {@code bytes} take of {@link #IN_FLIGHT}: all of it at most, so that one large record still goes. */
  private static int charge(long bytes) {
    return (int) Math.min(bytes, IN_FLIGHT);
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  /** The writer as the lane thread's serializer stream sees it: closing that stream leaves the writer to commit. */
  private static final class UnclosedWriter extends OutputStream {
    private final DiskBlockObjectWriter writer;

    UnclosedWriter(DiskBlockObjectWriter writer) {
      this.writer = writer;
    }

    @Override
    public void write(int b) {
      writer.write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      writer.write(b, off, len);
    }

    @Override
    public void flush() {
      writer.flush();
    }
  }

  @Override
  public void write(Iterator<Product2<K, V>> records) throws IOException {
    int partitions = dependency.partitioner().numPartitions();
    checksums = createPartitionChecksums(partitions, conf);
    ShuffleMapOutputWriter output = components.createMapOutputWriter(dependency.shuffleId(), mapId, partitions);
    try {
      if (!records.hasNext()) {
        lengths = output.commitAllPartitions(getChecksumValues(checksums)).getPartitionLengths();
      } else {
        partitionOnThisThread(records, partitions);
        lengths = joinPartitions(output);
      }
      status = MapStatus$.MODULE$.apply(blocks.shuffleServerId(), lengths, mapId);
    } catch (IOException | RuntimeException e) {
      try {
        output.abort(e);
      } catch (Exception suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private void partitionOnThisThread(Iterator<Product2<K, V>> records, int partitions) throws IOException {
    long opening = System.nanoTime();
    serializer = dependency.serializer().newInstance();
    chunkSize = Math.max(32 << 10, Math.min(CHUNK, IN_FLIGHT / partitions));
    lanes = new ArrayList<>(partitions);
    for (int i = 0; i < partitions; i++) {
      lanes.add(new Lane(i));
    }
    metrics.incWriteTime(System.nanoTime() - opening);
    long count = 0;
    boolean relocatable = dependency.serializer().supportsRelocationOfSerializedObjects();
    boolean retaining = false;
    try {
      while (records.hasNext() && failure.get() == null) {
        Product2<K, V> record = records.next();
        K key = record._1();
        V value = record._2();
        Lane lane = lanes.get(dependency.partitioner().getPartition(key));
        RetainedBatch retained = relocatable && (count == 0 || retaining) ? RetainedBatch.retain(value) : null;
        if (count == 0) {
          retaining = retained != null;
        }
        if (retained != null) {
          lane.handOver(key, retained);
        } else if (retaining) {
          lane.handOver(serializedApart(key, value));
        } else {
          lane.stage(key, value);
        }
        count++;
      }
      for (Lane lane : lanes) {
        lane.finish();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while writing map output " + mapId);
    } finally {
      awaitLanes();
    }
    rethrowFailure();
    metrics.incRecordsWritten(count);
    for (Lane lane : lanes) {
      metrics.incBytesWritten(lane.written.bytesWritten());
      metrics.incWriteTime(lane.written.writeTime());
    }
  }

  /** One record's bytes, serialized on the task's thread by a stream of their own. */
  private byte[] serializedApart(Object key, Object value) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    SerializationStream stream = serializer.serializeStream(bytes);
    stream.writeKey(key, ANY);
    stream.writeValue(value, ANY);
    stream.close();
    return bytes.toByteArray();
  }

  /** Waits, even when interrupted, until no writer thread holds one of this task's lanes. */
  private void awaitLanes() {
    if (lanes == null) {
      return;
    }
    boolean interrupted = false;
    for (Lane lane : lanes) {
      while (true) {
        try {
          lane.last.get();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          failure.compareAndSet(null, e.getCause());
          break;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void rethrowFailure() throws IOException {
    Throwable t = failure.get();
    if (t instanceof IOException e) {
      throw e;
    }
    if (t instanceof RuntimeException e) {
      throw e;
    }
    if (t != null) {
      throw new IOException("Writing map output " + mapId + " of shuffle " + dependency.shuffleId() + ": " + t, t);
    }
  }

  /** The partitions' files, in order, into the map output, as Spark's bypass writer joins them. */
  private long[] joinPartitions(ShuffleMapOutputWriter output) throws IOException {
    long start = System.nanoTime();
    for (int i = 0; i < lanes.size(); i++) {
      File file = lanes.get(i).segment.file();
      ShufflePartitionWriter partition = output.getPartitionWriter(i);
      if (file.exists()) {
        Optional<WritableByteChannelWrapper> channel = partition.openChannelWrapper();
        try (FileInputStream in = new FileInputStream(file)) {
          if (channel.isPresent()) {
            try (WritableByteChannelWrapper wrapper = channel.get()) {
              Utils.copyFileStreamNIO(in.getChannel(), wrapper.channel(), 0, in.getChannel().size());
            }
          } else {
            try (OutputStream out = partition.openStream()) {
              in.transferTo(out);
            }
          }
        }
        if (!file.delete()) {
          throw new IOException("Cannot delete " + file + " after joining it into map output " + mapId);
        }
      }
    }
    metrics.incWriteTime(System.nanoTime() - start);
    return output.commitAllPartitions(getChecksumValues(checksums)).getPartitionLengths();
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    if (stopping) {
      return Option.empty();
    }
    stopping = true;
    if (success) {
      if (status == null) {
        throw new IllegalStateException("stop(true) before write() finished, map output " + mapId);
      }
      return Option.apply(status);
    }
    awaitLanes();
    if (lanes != null) {
      for (Lane lane : lanes) {
        lane.writer.revertPartialWritesAndClose().delete();
      }
    }
    return Option.empty();
  }

  @Override
  public long[] getPartitionLengths() {
    return lengths;
  }

  /**
   * A partition's serialized records, in a chunk of the task's chunk size: each full chunk is
   * handed to the partition's thread whole, and the next bytes go into a spare one (or a new one
   * while none has come back), so a task allocates the chunks it holds at once, not one per
   * hand-over, and none grows.
   */
  private final class Staging extends OutputStream {
    private final Lane lane;
    private byte[] chunk;
    private int count;

    Staging(Lane lane) {
      this.lane = lane;
    }

    @Override
    public void write(int b) throws IOException {
      room();
      chunk[count++] = (byte) b;
      if (count == chunk.length) {
        handOver();
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      while (len > 0) {
        room();
        int n = Math.min(len, chunk.length - count);
        System.arraycopy(b, off, chunk, count, n);
        count += n;
        off += n;
        len -= n;
        if (count == chunk.length) {
          handOver();
        }
      }
    }

    private void room() {
      if (chunk == null) {
        byte[] spare = spareChunks.poll();
        chunk = spare != null ? spare : new byte[chunkSize];
      }
    }

    /** The partition's last bytes, after its records' stream is closed. */
    void handOverRest() throws IOException {
      if (count > 0) {
        handOver();
      } else if (chunk != null) {
        spareChunks.add(chunk);
        chunk = null;
      }
    }

    private void handOver() throws IOException {
      byte[] full = chunk;
      int length = count;
      chunk = null;
      count = 0;
      try {
        lane.handOver(full, length);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted while writing map output " + mapId);
      }
    }
  }
}
