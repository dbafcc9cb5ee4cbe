package io.gpudirect.protocol;

import java.io.Serializable;
import java.nio.ByteBuffer;

/**
 * A block of Spark's shuffle as a reducer names it: the reduce partitions
 * {@code [startReduceId, endReduceId)} of the output of map task {@code mapId} of shuffle
 * {@code shuffleId}. One partition is Spark's {@code ShuffleBlockId}; several consecutive ones are
 * its {@code ShuffleBlockBatchId}, fetched as one block (they are contiguous in the map output's
 * data file). The server, not the reducer, turns it into a file and a byte range, so a reducer
 * can never name a path or an offset.
 *
 * <p>Every id is non-negative ({@code mapId} is the map task's attempt id since Spark 3.0, a
 * long), and {@code startReduceId < endReduceId}.
 */
public record ShuffleBlockId(int shuffleId, long mapId, int startReduceId, int endReduceId)
    implements Serializable {
  static final int ENCODED_LENGTH = 4 + 8 + 4 + 4;

  public ShuffleBlockId {
    String wrong = wrong(shuffleId, mapId, startReduceId, endReduceId);
    if (wrong != null) {
      throw new IllegalArgumentException(wrong);
    }
  }

  /** The block of one reduce partition. */
  public static ShuffleBlockId of(int shuffleId, long mapId, int reduceId) {
    return new ShuffleBlockId(shuffleId, mapId, reduceId, reduceId + 1);
  }

  /** Why these ids name no block, or null when they name one. */
  private static String wrong(int shuffleId, long mapId, int startReduceId, int endReduceId) {
    if (shuffleId < 0 || mapId < 0 || startReduceId < 0) {
      return "shuffle, map and reduce ids must not be negative: shuffle " + shuffleId + ", map "
          + mapId + ", reduce " + startReduceId;
    }
    if (endReduceId <= startReduceId) {
      return "the end of a reduce range must be after its start: reduce " + startReduceId + " to "
          + endReduceId + " (exclusive) of shuffle " + shuffleId + ", map " + mapId;
    }
    return null;
  }

  /** How many reduce partitions the block holds. */
  public int partitions() {
    return endReduceId - startReduceId;
  }

  /**
   * The block's name as Spark writes it: {@code shuffle_S_M_R} for one partition,
   * {@code shuffle_S_M_START_END} for a range (end exclusive).
   */
  public String name() {
    String prefix = "shuffle_" + shuffleId + "_" + mapId + "_" + startReduceId;
    return partitions() == 1 ? prefix : prefix + "_" + endReduceId;
  }

  /** For people, naming every id: "shuffle 3, map 12, reduce 5" or "reduce 5 to 8 (exclusive)". */
  public String describe() {
    return "shuffle " + shuffleId + ", map " + mapId + ", reduce "
        + (partitions() == 1 ? String.valueOf(startReduceId)
            : startReduceId + " to " + endReduceId + " (exclusive)");
  }

  @Override
  public String toString() {
    return name();
  }

  void encode(ByteBuffer buf) {
    buf.putInt(shuffleId);
    buf.putLong(mapId);
    buf.putInt(startReduceId);
    buf.putInt(endReduceId);
  }

  static ShuffleBlockId decode(ByteBuffer buf, String field) {
    int shuffleId = buf.getInt();
    long mapId = buf.getLong();
    int start = buf.getInt();
    int end = buf.getInt();
    String wrong = wrong(shuffleId, mapId, start, end);
    if (wrong != null) {
      throw new ProtocolException(field + ": " + wrong);
    }
    return new ShuffleBlockId(shuffleId, mapId, start, end);
  }
}
