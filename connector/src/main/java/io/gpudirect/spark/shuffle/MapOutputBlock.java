package io.gpudirect.spark.shuffle;

import io.gpudirect.protocol.ShuffleBlockId;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Iterator;
import scala.collection.Seq;

/**
 * One block a reduce task reads: its ids, the map output's location and index as the map status
 * gives them (what a {@link FetchFailedException} must name for Spark to unregister that map
 * output and run its task again), and its size as the map status reports it.
 */
record MapOutputBlock(ShuffleBlockId id, BlockManagerId location, int mapIndex, long size) {
  /**
   * The blocks of {@code byLocation}, as {@code MapOutputTracker.getMapSizesByExecutorId} gives
   * them (only non-empty blocks, one per map output and reduce partition, in reduce order). With
   * {@code batch}, a map output's blocks become one block of its whole range, as Spark's own
   * fetcher batches them: one request, and the partitions between them are empty.
   */
  static List<MapOutputBlock> of(Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> byLocation,
      boolean batch) {
    List<MapOutputBlock> blocks = new ArrayList<>();
    while (byLocation.hasNext()) {
      Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> at = byLocation.next();
      MapOutputBlock run = null;
      for (Iterator<Tuple3<BlockId, Object, Object>> it = at._2().iterator(); it.hasNext(); ) {
        Tuple3<BlockId, Object, Object> b = it.next();
        org.apache.spark.storage.ShuffleBlockId s = (org.apache.spark.storage.ShuffleBlockId) b._1();
        MapOutputBlock block = new MapOutputBlock(ShuffleBlockId.of(s.shuffleId(), s.mapId(), s.reduceId()), at._1(),
            (Integer) b._3(), (Long) b._2());
        if (run != null && batch && run.id.mapId() == block.id.mapId()) {
          run = new MapOutputBlock(new ShuffleBlockId(run.id.shuffleId(), run.id.mapId(), run.id.startReduceId(),
              block.id.endReduceId()), run.location, run.mapIndex, run.size + block.size);
        } else {
          if (run != null) {
            blocks.add(run);
          }
          run = block;
        }
      }
      if (run != null) {
        blocks.add(run);
      }
    }
    return blocks;
  }

  /** Spark's id of the same block, as its resolver and serializer manager know it. */
  BlockId sparkId() {
    return id.partitions() == 1
        ? new org.apache.spark.storage.ShuffleBlockId(id.shuffleId(), id.mapId(), id.startReduceId())
        : new ShuffleBlockBatchId(id.shuffleId(), id.mapId(), id.startReduceId(), id.endReduceId());
  }

  /**
   * The failure that makes Spark run this block's map task again (it marks the running task as
   * failed by a fetch as it is made, so make it only to throw it). A range names its first
   * partition, as Spark's own fetcher does.
   */
  FetchFailedException fetchFailed(String message, Throwable cause) {
    return new FetchFailedException(location, id.shuffleId(), id.mapId(), mapIndex, id.startReduceId(), message,
        cause);
  }

  /** For messages: the block, its ids and where it was written. */
  String describe() {
    return id.name() + " (" + id.describe() + ") of executor " + location.executorId() + " on " + location.host();
  }
}
