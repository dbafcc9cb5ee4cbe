package io.gpudirect.spark.shuffle;

import java.io.IOException;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/** Spark's own writer, whose map status names the executor's gpudirect server as well ({@link ServerLocation}). */
final class LocatingShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  private final ShuffleWriter<K, V> spark;
  private final int serverPort;

  LocatingShuffleWriter(ShuffleWriter<K, V> spark, int serverPort) {
    this.spark = spark;
    this.serverPort = serverPort;
  }

  @Override
  public void write(Iterator<Product2<K, V>> records) throws IOException {
    spark.write(records);
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    Option<MapStatus> status = spark.stop(success);
    if (success && status.isDefined()) {
      MapStatus s = status.get();
      s.updateLocation(ServerLocation.withPort(s.location(), serverPort));
    }
    return status;
  }

  @Override
  public long[] getPartitionLengths() {
    return spark.getPartitionLengths();
  }
}
