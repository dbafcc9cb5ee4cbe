package io.gpudirect.shuffle;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.transport.DrainedBlockMemory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A block fetched to disk ({@link FetchToDisk}): each window, once in and checked, is written at
 * its place in a new file and its buffer given back at once, so the block holds a window per
 * stream of memory whatever its length. The file is made at the first window's answer; it
 * becomes the {@link FetchedBlock}'s, or is deleted when the fetch fails or is dropped.
 */
final class BlockDownload extends FetchMemory implements DrainedBlockMemory {
  private final FetchToDisk.TempFiles files;
  private Path file;
  private FileChannel channel;

  BlockDownload(BufferAllocator allocator, ShuffleBlockId block, FetchToDisk.TempFiles files) {
    super(allocator, block);
    this.files = files;
  }

  @Override
  public synchronized ByteBuffer bind(ShuffleData answer) {
    if (!done && channel == null) {
      open();
    }
    return super.bind(answer);
  }

  private void open() {
    try {
      file = files.create();
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot fetch shuffle block " + block.name() + " (" + block.describe()
          + ") to disk" + (file == null ? "" : " at " + file) + ": " + e.getMessage(), e);
    }
  }

  @Override
  public synchronized void drain(ShuffleData answer) {
    HostBuffer window = windows.remove(answer.offset());
    if (window == null) {
      return;  // an empty window has no buffer
    }
    try (window) {
      ByteBuffer bytes = window.nioBuffer();
      for (long at = answer.offset(); bytes.hasRemaining(); ) {
        at += channel.write(bytes, at);
      }
    } catch (IOException e) {
      throw writeFailed(e);
    }
  }

  @Override
  synchronized FetchedBlock fetched(InetSocketAddress server, long size, long requestNanos) {
    if (channel == null) {
      open();
    }
    done = true;
    long written;
    try {
      written = channel.size();
      channel.close();
    } catch (IOException e) {
      throw writeFailed(e);
    }
    if (written != size || !windows.isEmpty()) {
      throw new IllegalStateException("Shuffle block " + block.name() + " is " + size + " bytes but " + written
          + " reached " + file + ", " + windows.size() + " window(s) not written");
    }
    return new DownloadedBlock(block, server, size, requestNanos, file);
  }

  private UncheckedIOException writeFailed(IOException e) {
    return new UncheckedIOException("Cannot write shuffle block " + block.name() + " (" + block.describe()
        + ") to " + file + ": " + e.getMessage(), e);
  }

  @Override
  synchronized void release() {
    super.release();
    DownloadedBlock.closeAndDelete(channel, file);
  }
}
