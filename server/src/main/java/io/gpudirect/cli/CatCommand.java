package io.gpudirect.cli;

import io.gpudirect.client.FileEntry;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "cat", mixinStandardHelpOptions = true, description = "Write a remote file's bytes to stdout.")
final class CatCommand implements Callable<Integer> {
  @Parameters(paramLabel = "URI", description = "gpudirect://HOST:PORT/PATH of one file")
  String uri;

  @Option(names = "--buffer-size", defaultValue = "8m", paramLabel = "SIZE",
      description = "Bytes per buffer: from 4k to 1g (default ${DEFAULT-VALUE}; 64k, 1g as Spark writes sizes).")
  String bufferSize;

  @Option(names = "--buffers", defaultValue = "8", paramLabel = "N",
      description = "Buffers being filled at once, each with its own range of the file: from 2 to 64"
          + " (default ${DEFAULT-VALUE}).")
  int buffers;

  @Mixin
  ClientOptions client;

  /**
   * Several buffers, all being filled at once, each with the next range of the file: when the
   * oldest has landed it is written to stdout while the others go on arriving, and the range
   * after the newest is asked for into the buffer just written. The streams never drain at a
   * range's end, waiting for the next request to go out (which, on a link with drops, then
   * starts each stream with a burst; docs/benchmarks.md, "A link that is not loopback"), and
   * the network never waits for the disk or the pipe for longer than one range's write. More
   * than two, because a range is done only when its slowest chunk is: with two, one late chunk
   * on a lossy link left the other streams with a single range to work on.
   */
  @Override
  public Integer call() throws Exception {
    // Each buffer takes a range of at least a page, so every round of requests moves the copy on.
    int size = (int) OptionValues.size("--buffer-size", bufferSize, 4 << 10, 1 << 30);
    OptionValues.count("--buffers", buffers, 2, 64);
    GpuDirectUri location = GpuDirectUri.parse(uri);
    try (RemoteStore store = client.connect(location)) {
      return copy(store, location, size);
    }
  }

  private int copy(RemoteStore store, GpuDirectUri location, int bufferSize) throws Exception {
    FileEntry file = store.stat(location.path());
    if (file.directory()) {
      throw new io.gpudirect.GpuDirectException("Cannot cat " + location + ": it is a directory");
    }
    FileChannel out = new FileOutputStream(FileDescriptor.out).getChannel();
    try (BufferAllocator allocator = BufferAllocator.root().newChildAllocator("cat", (long) buffers * bufferSize)) {
      List<HostBuffer> held = new ArrayList<>();
      try {
        ByteBuffer[] views = new ByteBuffer[buffers];
        for (int k = 0; k < buffers; k++) {
          held.add(allocator.allocate(bufferSize));
          views[k] = held.get(k).nioBuffer();
        }
        copy(store, location, file, views, out);
      } finally {
        held.forEach(HostBuffer::close);
      }
    }
    return 0;
  }

  /** Fills every buffer with the next range, writes the oldest that landed, and so on to the end. */
  private static void copy(RemoteStore store, GpuDirectUri location, FileEntry file, ByteBuffer[] views,
      FileChannel out) throws java.io.IOException {
    CompletableFuture<?>[] pending = new CompletableFuture<?>[views.length];
    long next = 0;
    for (int k = 0; k < views.length; k++) {
      pending[k] = fetch(store, location, file, next, views[k]);
      next += views[k].remaining();
    }
    try {
      for (int i = 0; pending[i] != null; i = (i + 1) % views.length) {
        CompletableFuture<?> landed = pending[i];
        pending[i] = null;
        landed.join();
        ByteBuffer ready = views[i];
        while (ready.hasRemaining()) {
          out.write(ready);
        }
        pending[i] = fetch(store, location, file, next, views[i]);
        next += views[i].remaining();
      }
    } finally {
      // A failed read or write leaves the other ranges arriving into their buffers: they must
      // have landed (or failed) before the buffers are freed.
      for (CompletableFuture<?> p : pending) {
        if (p != null) {
          p.handle((v, e) -> null).join();
        }
      }
    }
  }

  /**
   * Starts filling {@code view} from {@code offset}; on completion it holds the bytes from
   * position 0. Every range names the version the stat found, so a file that changes while it
   * is copied fails the command (FileChangedException, exit code 1) before any byte of the new
   * version is written: what was written is a prefix of the old one.
   */
  private static CompletableFuture<?> fetch(RemoteStore store, GpuDirectUri location, FileEntry file,
      long offset, ByteBuffer view) {
    if (offset >= file.length()) {
      return null;
    }
    view.clear().limit((int) Math.min(view.capacity(), file.length() - offset));
    return store.readAsync(location.path(), file.version(), offset, view.duplicate());
  }
}
