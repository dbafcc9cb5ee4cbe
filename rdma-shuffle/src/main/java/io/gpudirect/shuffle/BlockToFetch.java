package io.gpudirect.shuffle;

import io.gpudirect.protocol.ShuffleBlockId;

/**
 * A block a reducer wants and its size as the map output's status reports it (Spark's
 * {@code MapStatus}, which may round or average small blocks): the size is what the fetcher's
 * bytes in flight count, the server's answer what is read.
 */
public record BlockToFetch(ShuffleBlockId id, long size) {
  public BlockToFetch {
    if (id == null) {
      throw new IllegalArgumentException("a block to fetch needs its id");
    }
    if (size < 0) {
      throw new IllegalArgumentException("Block " + id.name() + " (" + id.describe()
          + ") cannot have a negative size: " + size);
    }
  }
}
