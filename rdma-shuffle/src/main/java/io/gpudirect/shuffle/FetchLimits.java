package io.gpudirect.shuffle;

/**
 * How much a reduce task's fetches may have outstanding, as Spark's own fetcher bounds them
 * ({@code ShuffleBlockFetcherIterator}), from the same settings:
 * <ul>
 *   <li>{@code maxBytesInFlight}: {@code spark.reducer.maxSizeInFlight} (48m): the sizes of the
 *   blocks asked for whose bytes the task has not taken yet. A block larger than this still goes
 *   when nothing else is in flight, as in Spark, so that no block waits forever.</li>
 *   <li>{@code maxRequestsInFlight}: {@code spark.reducer.maxReqsInFlight} (unbounded): requests
 *   outstanding. Each block is one request here (Spark groups several blocks into one request of
 *   about a fifth of maxSizeInFlight; our requests are pipelined, one round trip for all).</li>
 *   <li>{@code maxBlocksInFlightPerAddress}: {@code spark.reducer.maxBlocksInFlightPerAddress}
 *   (unbounded): blocks outstanding from one executor's server, so that no server is flooded
 *   by every reducer at once.</li>
 * </ul>
 * A block counts against each from its request until its result is taken ({@link
 * ShuffleBlockFetcher#next}), so a task that does not keep up holds back further requests.
 */
public record FetchLimits(long maxBytesInFlight, int maxRequestsInFlight, int maxBlocksInFlightPerAddress) {
  /** Spark's defaults. */
  public static final FetchLimits SPARK_DEFAULTS = new FetchLimits(48L << 20, Integer.MAX_VALUE,
      Integer.MAX_VALUE);

  public FetchLimits {
    if (maxBytesInFlight <= 0 || maxRequestsInFlight <= 0 || maxBlocksInFlightPerAddress <= 0) {
      throw new IllegalArgumentException("Shuffle fetch limits must be positive:"
          + " spark.reducer.maxSizeInFlight=" + maxBytesInFlight + ", spark.reducer.maxReqsInFlight="
          + maxRequestsInFlight + ", spark.reducer.maxBlocksInFlightPerAddress="
          + maxBlocksInFlightPerAddress);
    }
  }
}
