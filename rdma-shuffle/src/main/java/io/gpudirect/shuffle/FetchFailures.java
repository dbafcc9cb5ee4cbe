package io.gpudirect.shuffle;

import io.gpudirect.client.RemoteFileException;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import io.gpudirect.transport.AuthenticationException;
import io.gpudirect.transport.ChecksumMismatchException;
import io.gpudirect.transport.PartitionChecksumMismatchException;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.TransportException;
import java.net.InetSocketAddress;

/** What a block's failed fetch means to a reducer: a {@link ShuffleFetchException}, or not a fetch failure at all. */
final class FetchFailures {
  private FetchFailures() {}

  /**
   * {@code err} (the client's final error, retries spent) as a fetch failure of {@code block}; or
   * {@code err} itself when it is no fetch failure (this side's memory, a bug), which the
   * reducer must not answer by running the map task again.
   */
  static RuntimeException of(ShuffleBlockId block, InetSocketAddress server, Throwable err) {
    Reason reason = reason(err);
    if (reason == null) {
      return err instanceof RuntimeException r ? r : new IllegalStateException(err);
    }
    // A refusal of the block's own server names the block, its ids and the server already.
    String refusal = err instanceof RemoteFileException && err.getCause() instanceof ServerErrorException s
        && s.getMessage().contains(block.name()) ? s.getMessage() : null;
    return new ShuffleFetchException(block, server, reason, refusal != null
        ? "Shuffle fetch failed (" + words(reason) + "): " + refusal
        : "Cannot fetch shuffle block " + block.name() + " (" + block.describe() + ") from "
            + server.getHostString() + ":" + server.getPort() + " (" + words(reason) + "): "
            + err.getMessage(), err);
  }

  private static Reason reason(Throwable err) {
    if (err instanceof RemoteFileException r) {
      return switch (r.code()) {
        case NOT_FOUND, OUT_OF_RANGE, IO_ERROR, NOT_A_FILE, OUTSIDE_ROOT -> Reason.BLOCK_UNAVAILABLE;
        case CORRUPT_MAP_OUTPUT -> Reason.MAP_OUTPUT_CORRUPT;
        case FILE_CHANGED -> Reason.MAP_OUTPUT_CHANGED;
        case SHUTTING_DOWN -> Reason.SERVER_LOST;
        default -> Reason.REFUSED;
      };
    }
    // Bytes unlike what Spark's writer wrote, again over a new connection: most likely its disk.
    if (err instanceof PartitionChecksumMismatchException
        || err instanceof ChecksumMismatchException && err.getCause() instanceof PartitionChecksumMismatchException) {
      return Reason.MAP_OUTPUT_CORRUPT;
    }
    if (err instanceof ChecksumMismatchException) {
      return Reason.CORRUPT_IN_TRANSIT;
    }
    // Not a gpudirect server where the executor's was, or one that broke the protocol: the
    // executor is gone (its port taken by another process) or its server broken.
    if (err instanceof TransportException || err instanceof ProtocolException) {
      return Reason.SERVER_LOST;
    }
    if (err instanceof AuthenticationException || err instanceof ServerErrorException) {
      return Reason.REFUSED;
    }
    return null;
  }

  private static String words(Reason reason) {
    return switch (reason) {
      case SERVER_LOST -> "server lost";
      case BLOCK_UNAVAILABLE -> "block unavailable";
      case MAP_OUTPUT_CORRUPT -> "map output corrupt";
      case MAP_OUTPUT_CHANGED -> "map output changed while read";
      case CORRUPT_IN_TRANSIT -> "corrupt in transit";
      case REFUSED -> "refused";
    };
  }
}
