package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ShuffleBlockId;
import java.net.InetSocketAddress;

/**
 * One block could not be fetched: which block, from which server, and why, with the client's
 * failure as the cause. A reducer turns it into Spark's {@code FetchFailedException} with these
 * ids, so that Spark runs the map task again (for every reason but {@link Reason#REFUSED},
 * which no rerun mends). Failures on the reducer's own side (no memory for the block) are not
 * fetch failures and are thrown as they are.
 */
public class ShuffleFetchException extends GpuDirectException {
  /** Why a block could not be had. */
  public enum Reason {
    /** The server could not be reached, dropped the connection, or did not answer in time, after every retry. */
    SERVER_LOST,
    /** The server has no such map output or reduce partition, or cannot read its files. */
    BLOCK_UNAVAILABLE,
    /** The map output's files are damaged: a malformed index, or a data file that does not match it. */
    MAP_OUTPUT_CORRUPT,
    /** The map output's files changed while the block was read; no bytes of the changed file were used. */
    MAP_OUTPUT_CHANGED,
    /** The bytes kept arriving with a CRC32C other than the server's, on every retry. */
    CORRUPT_IN_TRANSIT,
    /** The server refused the reducer itself: its secret, its protocol version, its limits. */
    REFUSED
  }

  private final ShuffleBlockId block;
  private final InetSocketAddress server;
  private final Reason reason;

  public ShuffleFetchException(ShuffleBlockId block, InetSocketAddress server, Reason reason,
      String message, Throwable cause) {
    super(message, cause);
    this.block = block;
    this.server = server;
    this.reason = reason;
  }

  public ShuffleBlockId block() {
    return block;
  }

  /** The server of the executor that wrote the block. */
  public InetSocketAddress server() {
    return server;
  }

  public Reason reason() {
    return reason;
  }
}
