package io.gpudirect.spark.shuffle;

import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.io.CompressionCodec$;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;
import scala.math.Ordering;

/**
 * A reduce task's reader: the blocks of map outputs {@code [startMapIndex, endMapIndex)} for
 * partitions {@code [startPartition, endPartition)} (AQE's coalesced and skew-split reads
 * included) from {@link ShuffleBlockStreams}, then what Spark's own {@code BlockStoreShuffleReader}
 * does with them, with Spark's classes: the dependency's aggregation (of combiners when the map
 * side combined) and key ordering, spilling as Spark does.
 */
final class GpuDirectShuffleReader<K, C> implements ShuffleReader<K, C> {
  private final BaseShuffleHandle<K, ?, C> handle;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int startPartition;
  private final int endPartition;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;
  private final ExecutorShuffle shuffle;
  private final ShuffleBlockResolver resolver;

  GpuDirectShuffleReader(BaseShuffleHandle<K, ?, C> handle, int startMapIndex, int endMapIndex, int startPartition,
      int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics, ExecutorShuffle shuffle,
      ShuffleBlockResolver resolver) {
    this.handle = handle;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.context = context;
    this.metrics = metrics;
    this.shuffle = shuffle;
    this.resolver = resolver;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Iterator<Product2<K, C>> read() {
    SparkEnv env = SparkEnv.get();
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    ShuffleBlockStreams blocks = new ShuffleBlockStreams(
        MapOutputBlock.of(env.mapOutputTracker().getMapSizesByExecutorId(handle.shuffleId(), startMapIndex,
            endMapIndex, startPartition, endPartition), batchFetch(env.conf(), dep)),
        env.blockManager().blockManagerId().executorId(), shuffle, resolver, env.serializerManager(), metrics);
    context.addTaskCompletionListener((org.apache.spark.util.TaskCompletionListener) c -> blocks.close());
    Iterator records = new InterruptibleIterator(context,
        new ShuffleRecords(blocks, dep.serializer().newInstance(), metrics, context));
    Option<Aggregator<K, ?, C>> aggregator = (Option) dep.aggregator();
    if (aggregator.isDefined()) {
      Aggregator a = aggregator.get();
      records = dep.mapSideCombine() ? a.combineCombinersByKey(records, context)
          : a.combineValuesByKey(records, context);
    }
    Option<Ordering<K>> ordering = dep.keyOrdering();
    if (ordering.isDefined()) {
      ExternalSorter sorter = new ExternalSorter(context, Option.empty(), Option.empty(), ordering, dep.serializer());
      records = sorter.insertAllAndUpdateMetrics(records);
    }
    return records instanceof InterruptibleIterator ? records : new InterruptibleIterator(context, records);
  }

  /**
   * Whether a map output's consecutive blocks are fetched as one, when Spark's own reader would:
   * AQE asked for it, and the serialized streams of several partitions, laid end to end, still
   * read as one (a relocatable serializer, a codec that allows concatenation; not with I/O
   * encryption, whose streams do not concatenate).
   */
  private boolean batchFetch(SparkConf conf, ShuffleDependency<K, ?, C> dep) {
    boolean compressed = conf.getBoolean("spark.shuffle.compress", true);
    return SortShuffleManager.canUseBatchFetch(startPartition, endPartition, context)
        && dep.serializer().supportsRelocationOfSerializedObjects()
        && (!compressed || CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(
            CompressionCodec$.MODULE$.createCodec(conf)))
        && !conf.getBoolean("spark.io.encryption.enabled", false);
  }
}
