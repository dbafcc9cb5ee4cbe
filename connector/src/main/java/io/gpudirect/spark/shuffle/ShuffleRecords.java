package io.gpudirect.spark.shuffle;

import java.io.InputStream;
import java.util.NoSuchElementException;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import scala.Product2;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * The records of a reduce task's blocks, block after block, deserialized with the shuffle's
 * serializer; each counted in Spark's read metrics, which are merged into the task's once the
 * last record has been read (as Spark's own reader merges them).
 */
final class ShuffleRecords extends AbstractIterator<Product2<Object, Object>> {
  private final ShuffleBlockStreams blocks;
  private final SerializerInstance serializer;
  private final ShuffleReadMetricsReporter metrics;
  private final TaskContext context;
  private DeserializationStream stream;
  private Iterator<Tuple2<Object, Object>> records;
  private boolean done;

  ShuffleRecords(ShuffleBlockStreams blocks, SerializerInstance serializer, ShuffleReadMetricsReporter metrics,
      TaskContext context) {
    this.blocks = blocks;
    this.serializer = serializer;
    this.metrics = metrics;
    this.context = context;
  }

  @Override
  public boolean hasNext() {
    while (!done && (records == null || !records.hasNext())) {
      if (stream != null) {
        stream.close();
        stream = null;
      }
      InputStream next = blocks.next();
      if (next == null) {
        done = true;
        blocks.close();
        context.taskMetrics().mergeShuffleReadMetrics();
      } else {
        stream = serializer.deserializeStream(next);
        records = stream.asKeyValueIterator();
      }
    }
    return !done;
  }

  @Override
  public Product2<Object, Object> next() {
    if (!hasNext()) {
      throw new NoSuchElementException("Every record of this reduce task's shuffle blocks has been read");
    }
    metrics.incRecordsRead(1);
    return records.next();
  }
}
