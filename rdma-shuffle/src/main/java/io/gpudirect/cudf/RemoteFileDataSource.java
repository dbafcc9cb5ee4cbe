package io.gpudirect.cudf;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.DeviceMemoryBuffer;
import ai.rapids.cudf.HostMemoryBuffer;
import io.gpudirect.GpuDirectException;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.gpu.CopyEngine;
import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.HostMemoryAllocator;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.FileVersion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A remote file as cuDF's {@link ai.rapids.cudf.DataSource}: cuDF's readers
 * ({@code Table.readParquet(options, source)} and the others) ask it for byte ranges, and
 * only those ranges cross the wire. Device reads go socket → pinned chunk → GPU, with the
 * copy of one chunk overlapping the arrival of the next, each chunk taken from the pool only
 * when its bytes start to arrive ({@link ChunkOnArrival}); host reads (footers) go straight
 * into cuDF's host buffer.
 *
 * <p>Every read names the file's version (from the listing or stat that gave its size), so a
 * file that changes while cuDF reads it fails the read with {@code FileChangedException}
 * rather than handing cuDF bytes of two versions.
 *
 * <p>The store, pool and engine are shared and stay open; this source owns none of them. It
 * allocates no device memory either: a device read fills the buffer it is given, which cuDF
 * allocated (and owns) or a caller took from a {@code DeviceAllocator}. The host buffers it
 * hands cuDF come from a {@link HostMemoryAllocator}, charged until cuDF closes them.
 */
public final class RemoteFileDataSource extends ai.rapids.cudf.DataSource {
  private static final Logger LOG = LoggerFactory.getLogger(RemoteFileDataSource.class);

  private final RemoteStore store;
  private final String path;
  private final FileVersion version;
  private final long size;
  private final PinnedChunkPool pool;
  private final CopyEngine engine;
  private final HostMemoryAllocator host;
  /** Takes each piece's chunk before its request is sent, as before late binding: for comparison only. */
  private final boolean bindAtSend;
  /**
   * What this source's reads fetched and how long their callers waited, host and device reads
   * alike. Counted here rather than per thread, since cuDF may call back on threads of its own;
   * whoever owns the source adds them to its task's counters when the read is done.
   */
  private final AtomicLong fetchedBytes = new AtomicLong();
  private final AtomicLong fetchNanos = new AtomicLong();

  /** Reads through {@code gpu}'s pinned pool and copy engine; host buffers charged to its {@code host()}. */
  public RemoteFileDataSource(RemoteStore store, String path, FileVersion version, long size,
      GpuResources gpu) {
    this(store, path, version, size, gpu.pool(), gpu.engine(), gpu.host(), false);
  }

  /** Reads through {@code pool} and {@code engine}; host buffers charged to the process-wide root. */
  public RemoteFileDataSource(RemoteStore store, String path, FileVersion version, long size,
      PinnedChunkPool pool, CopyEngine engine) {
    this(store, path, version, size, pool, engine, new HostMemoryAllocator(BufferAllocator.root()), false);
  }

  /** With {@code bindAtSend}, the way every device read took its chunks before late binding (GpuFetchBenchmark). */
  RemoteFileDataSource(RemoteStore store, String path, FileVersion version, long size,
      PinnedChunkPool pool, CopyEngine engine, boolean bindAtSend) {
    this(store, path, version, size, pool, engine, new HostMemoryAllocator(BufferAllocator.root()), bindAtSend);
  }

  private RemoteFileDataSource(RemoteStore store, String path, FileVersion version, long size,
      PinnedChunkPool pool, CopyEngine engine, HostMemoryAllocator host, boolean bindAtSend) {
    this.host = host;
    this.bindAtSend = bindAtSend;
    this.store = store;
    this.path = path;
    this.version = version;
    this.size = size;
    this.pool = pool;
    this.engine = engine;
  }

  @Override
  public long size() {
    return size;
  }

  /** Bytes this source's reads have fetched so far. */
  public long fetchedBytes() {
    return fetchedBytes.get();
  }

  /** Nanoseconds callers of this source have waited for its reads so far. */
  public long fetchNanos() {
    return fetchNanos.get();
  }

  private void fetched(long bytes, long startNanos) {
    fetchedBytes.addAndGet(bytes);
    fetchNanos.addAndGet(System.nanoTime() - startNanos);
  }

  @Override
  public HostMemoryBuffer hostRead(long offset, long amount) {
    long n = clamp(offset, amount);
    HostMemoryBuffer buffer = host.allocate(n, "host read of " + path);
    try {
      fill(buffer, offset, n);
      return buffer;
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
  }

  @Override
  public long hostRead(long offset, HostMemoryBuffer dest) {
    long n = clamp(offset, dest.getLength());
    fill(dest, offset, n);
    return n;
  }

  @Override
  public boolean supportsDeviceRead() {
    return true;
  }

  /**
   * Fills {@code dest} from {@code offset}. cuDF may use the buffer on {@code stream} as soon
   * as this returns, so every copy has landed by then.
   */
  @Override
  public long deviceRead(long offset, DeviceMemoryBuffer dest, Cuda.Stream stream) {
    long start = System.nanoTime();
    long n = clamp(offset, dest.getLength());
    deviceFill(new long[] {offset, n}, dest.getAddress());
    fetched(n, start);
    return n;
  }

  /**
   * Fills {@code dest} with several ranges of the file, back to back in the order given. Their
   * chunks are all asked for at once, so a slice's column chunks come over every stream
   * together instead of one range's round trip after another's.
   *
   * @param ranges offset and length pairs; their lengths add up to at most {@code dest}'s
   */
  public void deviceReadRanges(long[] ranges, DeviceMemoryBuffer dest) {
    long start = System.nanoTime();
    long total = 0;
    for (int i = 0; i < ranges.length; i += 2) {
      if (clamp(ranges[i], ranges[i + 1]) != ranges[i + 1]) {
        throw new GpuDirectException("Cannot read '" + path + "' at offset " + ranges[i] + ": the range of "
            + ranges[i + 1] + " bytes passes the end of the file (" + size + " bytes)");
      }
      total += ranges[i + 1];
    }
    if (total > dest.getLength()) {
      throw new IllegalArgumentException(total + " bytes of ranges do not fit a buffer of " + dest.getLength());
    }
    deviceFill(ranges, dest.getAddress());
    fetched(total, start);
  }

  /** Reads the offset and length pairs {@code ranges} to device memory from {@code address} on, back to back. */
  private void deviceFill(long[] ranges, long address) {
    // GPUDirect RDMA: the NIC writes into device memory, no host copy. What the store cannot
    // take that way (TCP, or GPU memory not registrable) goes socket -> pinned chunk -> GPU below.
    int first = intoDevice(ranges, address);
    long to = address;
    for (int r = 0; r < first; r += 2) {
      to += ranges[r + 1];
    }
    boolean checkOnDevice = engine.checksumsOnDevice();
    Map<Piece, CompletableFuture<Boolean>> pieces = new LinkedHashMap<>();
    // The first failure of any piece, seen at once instead of by rescanning every future.
    AtomicReference<Throwable> failed = new AtomicReference<>();
    for (int r = first; r < ranges.length && failed.get() == null; r += 2) {
      long done = 0;
      while (done < ranges[r + 1] && failed.get() == null) {
        int len = (int) Math.min(pool.chunkSize(), ranges[r + 1] - done);
        Piece piece = new Piece(ranges[r] + done, len, to + done);
        CompletableFuture<Boolean> landed = fetch(piece, checkOnDevice);
        landed.whenComplete((v, err) -> {
          if (err != null) {
            failed.compareAndSet(null, err instanceof CompletionException ce && ce.getCause() != null ? ce.getCause() : err);
          }
        });
        pieces.put(piece, landed);
        done += len;
      }
      to += ranges[r + 1];
    }
    RuntimeException failure = null;
    List<Piece> corrupt = new ArrayList<>();
    // Wait for every read and copy, even after a failure: none may write into dest later.
    for (Map.Entry<Piece, CompletableFuture<Boolean>> p : pieces.entrySet()) {
      try {
        if (!p.getValue().join()) {
          corrupt.add(p.getKey());
        }
      } catch (CompletionException e) {
        if (failure == null) {
          failure = asRuntime(e.getCause());
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    // Rare: bytes the GPU found corrupt come again, checked on the CPU this time, where the
    // store retries a corrupt chunk on another connection and names it if it stays corrupt.
    for (Piece p : corrupt) {
      try {
        fetch(p, false).join();
      } catch (CompletionException e) {
        throw asRuntime(e.getCause());
      }
    }
    // Each copy's future completes only once its event has fired, so every byte has landed.
    // No engine-wide synchronize here: it would make concurrent tasks wait for each other's copies.
  }

  /**
   * How many leading ranges the store put straight into device memory (GPUDirect RDMA), from
   * {@code address} on; it stops at the first it cannot take.
   */
  private int intoDevice(long[] ranges, long address) {
    long to = address;
    for (int r = 0; r < ranges.length; r += 2) {
      if (ranges[r + 1] > 0 && !store.readIntoDevice(path, version, ranges[r], to, ranges[r + 1])) {
        return r;
      }
      to += ranges[r + 1];
    }
    return ranges.length;
  }

  /** A chunk-sized piece of a device read: where it is in the file and where it goes. */
  private record Piece(long fileOffset, int length, long deviceAddress) {}

  /**
   * Socket -> pinned chunk -> device. With {@code checkOnDevice} the bytes' CRC32C is checked by
   * the GPU where they landed, instead of by the CPU as they arrive (issue 3: that check was
   * what held the fetch under the socket's rate). Completes with true once the bytes are in
   * device memory, false when the GPU found them corrupt.
   */
  private CompletableFuture<Boolean> fetch(Piece p, boolean checkOnDevice) {
    // The chunk is taken from the pool when the piece's bytes start to arrive, not now: see
    // ChunkOnArrival. The caller waits here only for the store's bytes-in-flight window.
    ChunkOnArrival chunk = new ChunkOnArrival(pool, p.length());
    if (bindAtSend) {
      chunk.bind();
    }
    CompletableFuture<OptionalInt> read = checkOnDevice
        ? store.readAsyncUnverified(path, version, p.fileOffset(), p.length(), chunk)
        : store.readAsync(path, version, p.fileOffset(), p.length(), chunk)
            .thenApply(v -> OptionalInt.empty());
    // The socket fills the chunk; then the engine owns it and gives it back after the copy.
    return read.handle((crc, err) -> {
          if (err != null) {
            chunk.giveBack();
            throw err instanceof CompletionException ce ? ce : new CompletionException(err);
          }
          return crc;
        })
        .thenCompose(expected -> expected.isEmpty()
            ? engine.copyToDevice(chunk.handOver(), p.length(), p.deviceAddress()).thenApply(v -> true)
            : engine.copyToDeviceWithCrc32c(chunk.handOver(), p.length(), p.deviceAddress())
                .thenApply(actual -> intact(p, expected.getAsInt(), actual)));
  }

  private boolean intact(Piece p, int expected, int actual) {
    if (actual == expected) {
      return true;
    }
    LOG.warn("CRC32C of '{}' at offset {} length {} from {} was wrong in device memory (expected"
        + " {}, got {}); fetching it again, checked on the CPU", path, p.fileOffset(), p.length(),
        store, String.format("%08x", expected), String.format("%08x", actual));
    return false;
  }

  private static RuntimeException asRuntime(Throwable t) {
    return t instanceof RuntimeException r ? r : new GpuDirectException(String.valueOf(t.getMessage()), t);
  }

  private void fill(HostMemoryBuffer buffer, long offset, long n) {
    long start = System.nanoTime();
    long done = 0;
    while (done < n) {
      int len = (int) Math.min(Integer.MAX_VALUE - 8, n - done);
      store.read(path, version, offset + done, buffer.asByteBuffer(done, len));
      done += len;
    }
    fetched(n, start);
  }

  private long clamp(long offset, long amount) {
    if (offset < 0 || offset > size) {
      throw new GpuDirectException("Cannot read '" + path + "' at offset " + offset + ": the file has " + size + " bytes");
    }
    return Math.min(amount, size - offset);
  }
}
