package io.gpudirect.spark.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.shuffle.BlockToFetch;
import io.gpudirect.shuffle.FetchedBlock;
import io.gpudirect.shuffle.ShuffleBlockFetcher;
import io.gpudirect.shuffle.ShuffleFetchException;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import scala.Option;

/**
 * The blocks of one reduce task, one at a time, as streams of their records' serialized bytes
 * (decrypted and decompressed by Spark's serializer manager): the executor's own blocks read
 * from its disk through Spark's resolver, the others fetched from their executors' gpudirect
 * servers, whose requests go out at once, while the local ones are read (those over
 * {@code spark.network.maxRemoteBlockSizeFetchToMem} into files of the block manager's, as
 * Spark's own fetcher does, deleted once read or when the task ends). As in Spark's
 * {@code ShuffleBlockFetcherIterator}, any failure to get or to decode a block's bytes is thrown
 * as a {@code FetchFailedException} naming that block's map output, so that Spark runs its map
 * task again (the remote blocks are decoded on the executor's threads ahead of the task where
 * {@value ExecutorShuffle#DECODE_THREADS} is set, see {@link DecodeAhead}); a server that
 * refused this reducer (a wrong secret) fails the task instead, which no rerun of the map would
 * mend. Spark's read metrics are counted as blocks are taken.
 */
final class ShuffleBlockStreams implements AutoCloseable {
  private final ArrayDeque<MapOutputBlock> local = new ArrayDeque<>();
  private final Map<io.gpudirect.protocol.ShuffleBlockId, MapOutputBlock> remote = new HashMap<>();
  /** Remote blocks whose map status names no gpudirect server: each fails when its turn comes. */
  private final ArrayDeque<MapOutputBlock> unreachable = new ArrayDeque<>();
  private final ShuffleBlockResolver resolver;
  private final SerializerManager serializers;
  private final ShuffleReadMetricsReporter metrics;
  private final ShuffleBlockFetcher fetcher;
  /** The remote blocks decoded on the executor's threads, where it has them; else null. */
  private final DecodeAhead ahead;
  /** The block being read, closed when the next is taken. */
  private BlockStream current;
  /**
   * The remote requests' time so far, and the whole milliseconds of it reported: summed before it
   * is rounded, since a request of one small block often takes less than a millisecond.
   */
  private long requestNanos;
  private long requestMillisReported;
  private boolean closed;

  ShuffleBlockStreams(List<MapOutputBlock> blocks, String executorId, ExecutorShuffle shuffle,
      ShuffleBlockResolver resolver, SerializerManager serializers, ShuffleReadMetricsReporter metrics) {
    this.resolver = resolver;
    this.serializers = serializers;
    this.metrics = metrics;
    Map<InetSocketAddress, List<BlockToFetch>> byServer = new LinkedHashMap<>();
    for (MapOutputBlock b : blocks) {
      if (b.location().executorId().equals(executorId)) {
        local.add(b);
        continue;
      }
      InetSocketAddress server = ServerLocation.of(b.location());
      if (server == null) {
        unreachable.add(b);
      } else {
        remote.put(b.id(), b);
        byServer.computeIfAbsent(server, s -> new ArrayList<>()).add(new BlockToFetch(b.id(), b.size()));
      }
    }
    fetcher = remote.isEmpty() ? null : ShuffleBlockFetcher.start(byServer, shuffle.limits(), shuffle.toDisk(),
        shuffle.clients(), shuffle.memory());
    ahead = fetcher == null || shuffle.decodeThreads() == 0 ? null : new DecodeAhead(fetcher, remote.size(),
        shuffle.decoders(), shuffle.decodeThreads(), shuffle.limits().maxBytesInFlight(),
        (id, raw) -> serializers.wrapStream(remote.get(id).sparkId(), raw));
  }

  /** The next block's bytes, or null once every block has been read; closes the one before. */
  InputStream next() {
    closeCurrent();
    MapOutputBlock gone = unreachable.poll();
    if (gone != null) {
      throw sneaky(gone.fetchFailed("Cannot fetch shuffle block " + gone.describe() + ": its map status names no"
          + " gpudirect shuffle server (" + gone.location() + "), as when a decommissioned executor moved it", null));
    }
    MapOutputBlock b = local.poll();
    if (b != null) {
      current = openLocal(b);
    } else if (ahead != null ? ahead.hasNext() : fetcher != null && fetcher.hasNext()) {
      current = nextRemote();
    }
    return current;
  }

  private BlockStream openLocal(MapOutputBlock b) {
    ManagedBuffer buffer;
    InputStream in;
    try {
      buffer = resolver.getBlockData(b.sparkId(), Option.empty());
      in = buffer.createInputStream();
    } catch (Exception e) {
      throw sneaky(b.fetchFailed("Cannot read local shuffle block " + b.describe() + ": " + e.getMessage(), e));
    }
    metrics.incLocalBlocksFetched(1);
    metrics.incLocalBytesRead(buffer.size());
    return new BlockStream(b, in, in, true);
  }

  private BlockStream nextRemote() {
    long start = System.nanoTime();
    FetchedBlock fetched;
    DecodeAhead.Ready decodedAhead = null;
    try {
      if (ahead == null) {
        fetched = fetcher.next();
      } else {
        decodedAhead = ahead.next();
        if (decodedAhead.failure() != null) {
          throw decodedAhead.failure();
        }
        fetched = decodedAhead.block();
      }
    } catch (ShuffleFetchException e) {
      MapOutputBlock b = remote.get(e.block());
      if (e.reason() == ShuffleFetchException.Reason.REFUSED) {
        // This reducer itself was refused (another application's secret, a protocol version the
        // server does not speak): running the map task again would be refused again.
        throw new GpuDirectException(e.getMessage() + "; the shuffle servers and reducers of one application"
            + " share its secret (" + ShuffleSecret.SETTING + ", or derived from Spark's with spark.authenticate)"
            + " and its gpudirect version", e);
      }
      throw sneaky(b.fetchFailed(e.getMessage(), e));
    } finally {
      metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }
    countRemote(fetched);
    MapOutputBlock b = remote.get(fetched.id());
    if (decodedAhead != null && decodedAhead.undecodable() != null) {
      throw undecodable(b, decodedAhead.undecodable());
    }
    if (decodedAhead != null && decodedAhead.decoded() != null) {
      return new BlockStream(b, new ByteArrayInputStream(decodedAhead.decoded()), fetched, false);
    }
    InputStream in;
    try {
      in = fetched.inputStream();
    } catch (RuntimeException e) {
      // A block on disk whose file cannot be opened: a fetch failure, as in Spark's fetcher.
      fetched.close();
      throw sneaky(b.fetchFailed("Cannot read shuffle block " + b.describe() + " fetched to disk: " + e.getMessage(),
          e));
    }
    return new BlockStream(b, in, fetched, true);
  }

  /** A block whose bytes would not decode: damaged, so its map task runs again. */
  private static RuntimeException undecodable(MapOutputBlock block, Exception e) {
    return sneaky(block.fetchFailed("Shuffle block " + block.describe() + " cannot be decoded, its bytes are"
        + " damaged (" + e + "); its map task runs again", e));
  }

  /** Spark's read metrics of a remote block the task has taken. */
  private void countRemote(FetchedBlock fetched) {
    metrics.incRemoteBlocksFetched(1);
    metrics.incRemoteBytesRead(fetched.size());
    if (fetched.onDisk()) {
      metrics.incRemoteBytesReadToDisk(fetched.size());
    }
    requestNanos += fetched.requestNanos();
    long millis = TimeUnit.NANOSECONDS.toMillis(requestNanos);
    metrics.incRemoteReqsDuration(millis - requestMillisReported);
    requestMillisReported = millis;
  }

  private void closeCurrent() {
    BlockStream c = current;
    current = null;
    if (c != null) {
      c.close();
    }
  }

  /** Gives back the block being read and every block fetched and not read; idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        closeCurrent();
      } finally {
        try (ShuffleBlockFetcher f = fetcher; DecodeAhead a = ahead) {
          // Closed in reverse order: the blocks decoded ahead first, then those still being fetched.
        }
      }
    }
  }

  /**
   * One block's records' bytes, decoded by Spark's serializer manager (here, or ahead by
   * {@link DecodeAhead}); a failure to read or decode them (a codec's checksum, a truncated
   * stream) is the block's fetch failure.
   */
  private final class BlockStream extends FilterInputStream {
    private final MapOutputBlock block;
    private final AutoCloseable bytes;

    BlockStream(MapOutputBlock block, InputStream stream, AutoCloseable bytes, boolean toDecode) {
      super(null);
      this.block = block;
      this.bytes = bytes;
      try {
        in = toDecode ? serializers.wrapStream(block.sparkId(), stream) : stream;
      } catch (Exception e) {
        closeQuietly();
        throw corrupt(e);
      }
    }

    @Override
    public int read() {
      try {
        return in.read();
      } catch (IOException e) {
        throw corrupt(e);
      }
    }

    @Override
    public int read(byte[] b, int off, int len) {
      try {
        return in.read(b, off, len);
      } catch (IOException e) {
        throw corrupt(e);
      }
    }

    @Override
    public long skip(long n) {
      try {
        return in.skip(n);
      } catch (IOException e) {
        throw corrupt(e);
      }
    }

    @Override
    public int available() {
      try {
        return in.available();
      } catch (IOException e) {
        throw corrupt(e);
      }
    }

    private RuntimeException corrupt(Exception e) {
      return undecodable(block, e);
    }

    /** Idempotent: the deserializer and this reader may both close it. */
    @Override
    public void close() {
      closeQuietly();
    }

    private void closeQuietly() {
      try {
        if (in != null) {
          in.close();
        }
      } catch (IOException e) {
        // Closing a decoder over bytes in memory or a local file: nothing left to lose.
      } finally {
        in = null;
        try {
          bytes.close();
        } catch (Exception e) {
          // As above.
        }
      }
    }
  }

  /** Throws Spark's checked {@code FetchFailedException} from the iterators Spark calls, as Scala code does. */
  @SuppressWarnings("unchecked")
  static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
    throw (E) e;
  }
}
