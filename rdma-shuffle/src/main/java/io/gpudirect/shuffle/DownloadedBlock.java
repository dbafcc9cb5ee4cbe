package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A block fetched to disk ({@link FetchToDisk}): read from its file, which closing deletes. */
final class DownloadedBlock extends FetchedBlock {
  private static final Logger LOG = LoggerFactory.getLogger(DownloadedBlock.class);
  /** What a codec's small reads are served from, as a file's pages would be by Spark's own reader. */
  private static final int READ_BUFFER = 64 << 10;

  private final Path file;
  /** Every stream handed out, closed with the block. */
  private final List<InputStream> streams = new ArrayList<>();

  DownloadedBlock(ShuffleBlockId id, InetSocketAddress server, long size, long requestNanos, Path file) {
    super(id, server, size, requestNanos);
    this.file = file;
  }

  @Override
  public boolean onDisk() {
    return true;
  }

  @Override
  public ByteBuffer nioBuffer() {
    throw new GpuDirectException("Shuffle block " + id().name() + " (" + id().describe() + ") is " + size()
        + " bytes fetched to disk (" + file + "); read it with inputStream()");
  }

  @Override
  public InputStream inputStream() {
    checkOpen();
    try {
      InputStream in = new BufferedInputStream(Files.newInputStream(file), READ_BUFFER);
      streams.add(in);
      return in;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read shuffle block " + id().name() + " (" + id().describe()
          + ") fetched to " + file + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      streams.forEach(DownloadedBlock::closeQuietly);
      closeAndDelete(null, file);
    }
  }

  /** Closes {@code channel} and deletes {@code file}, either of which may be null; a failure is logged, not thrown. */
  static void closeAndDelete(Closeable channel, Path file) {
    closeQuietly(channel);
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        LOG.warn("Cannot delete {}, a shuffle block fetched to disk: {}", file, e.toString());
      }
    }
  }

  private static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // Read from, or written and given up: nothing in it is still wanted.
      }
    }
  }
}
