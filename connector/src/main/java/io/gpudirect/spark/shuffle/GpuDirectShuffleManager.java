package io.gpudirect.spark.shuffle;

import java.util.Map;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleDataIOUtils;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.sort.BypassMergeSortShuffleHandle;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's sort-based shuffle with gpudirect's transport for the fetch:
 * {@code spark.shuffle.manager=io.gpudirect.spark.shuffle.GpuDirectShuffleManager}. Everything
 * but the reader is Spark's {@link SortShuffleManager}, which this one is: its writers (sort,
 * spill, serializer, compression, checksums, map statuses), its resolver and its clean-up.
 * Being one, not holding one, matters: Spark SQL copies every row before a shuffle write unless
 * the manager is a {@code SortShuffleManager}
 * ({@code ShuffleExchangeExec.needToCopyObjectsBeforeShuffle}), which cost 718 MB of copies on a
 * 771 MiB repartition and 7% of its map phase while this one held Spark's. Each executor
 * serves its own map outputs through a gpudirect server, started at its first map task and named
 * in its map statuses; reducers fetch the other executors' blocks from those servers
 * ({@link GpuDirectShuffleReader}) and read their own from disk. With
 * {@code spark.gpudirect.shuffle.writeThreads} set, a shuffle Spark would write with its bypass
 * writer is written by {@link ThreadedBypassWriter}, Spark's parts on the executor's threads.
 * Settings it cannot honour
 * (the external shuffle service, push-based shuffle, RPC encryption without the shuffle's TLS) are
 * refused at start.
 */
public final class GpuDirectShuffleManager extends SortShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(GpuDirectShuffleManager.class);

  private final ExecutorShuffle executor;
  private ShuffleExecutorComponents components;

  /** Made by Spark, on the driver and on each executor, from {@code spark.shuffle.manager}. */
  public GpuDirectShuffleManager(SparkConf conf, boolean isDriver) {
    super(conf);
    ShuffleTransport transport = ShuffleTransport.of(conf);
    UnsupportedSettings.refuse(conf, transport);
    if (isDriver) {
      ShuffleSecret.makeIfNeeded(conf);
    }
    this.executor = new ExecutorShuffle(conf, transport);
    LOG.info("Shuffle: Spark's sort-based writers, fetches over gpudirect ({})", isDriver ? "driver" : "executor");
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
      ShuffleWriteMetricsReporter metrics) {
    int port = executor.serverPort();
    // Spark's writer is made either way: making it records the map output for the shuffle's
    // clean-up, and writes nothing until asked to.
    ShuffleWriter<K, V> writer = super.getWriter(handle, mapId, context, metrics);
    if (executor.writeThreads() > 0 && handle instanceof BypassMergeSortShuffleHandle<?, ?> bypass) {
      SparkEnv env = SparkEnv.get();
      writer = new ThreadedBypassWriter<>(env.blockManager(), (ShuffleDependency<K, V, V>) bypass.dependency(), mapId,
          metrics, executorComponents(), executor.writers(), executor.retainedRecords(), env.conf());
    }
    return new LocatingShuffleWriter<>(writer, port);
  }

  /** Spark's shuffle data I/O for this executor, made as Spark's manager makes its own (whose is private). */
  private synchronized ShuffleExecutorComponents executorComponents() {
    if (components == null) {
      SparkConf conf = SparkEnv.get().conf();
      ShuffleExecutorComponents c = ShuffleDataIOUtils.loadShuffleDataIO(conf).executor();
      Map<String, String> extra = new java.util.HashMap<>();
      for (scala.Tuple2<String, String> kv : conf.getAllWithPrefix(ShuffleDataIOUtils.SHUFFLE_SPARK_CONF_PREFIX())) {
        extra.put(kv._1(), kv._2());
      }
      c.initializeExecutor(conf.getAppId(), SparkEnv.get().executorId(), extra);
      components = c;
    }
    return components;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
      int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
    return new GpuDirectShuffleReader<>((BaseShuffleHandle<K, ?, C>) handle, startMapIndex, endMapIndex,
        startPartition, endPartition, context, metrics, executor, shuffleBlockResolver());
  }

  /** Tests: this JVM's server, as its log line describes it; null before its first map task. */
  String serverDescription() {
    return executor.serverDescription();
  }

  /** Tests: records this JVM's writer threads serialized from a reference of their own, so far. */
  long retainedRecords() {
    return executor.retainedRecords().sum();
  }

  /** Tests: the plugin's batches this JVM's writer threads hold a reference to now. */
  long retainedBatchesHeld() {
    return RetainedBatch.held();
  }

  /** Tests: bytes this JVM's reducers fetched so far, by transport. */
  Map<String, Long> bytesFetchedByTransport() {
    return executor.bytesFetchedByTransport();
  }

  @Override
  public void stop() {
    try {
      executor.close();
    } catch (RuntimeException e) {
      LOG.warn("Stopping the gpudirect shuffle: {}", e.toString(), e);
    } finally {
      super.stop();
    }
  }
}
