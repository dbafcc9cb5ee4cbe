package io.gpudirect.client;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.transport.BlockMemory;
import io.gpudirect.transport.PayloadMemory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;

/**
 * One gpudirect server as seen by a reader: metadata calls and positioned reads into
 * caller-owned buffers. Implementations are thread-safe and shared by every task of an
 * executor that reads from the same server.
 *
 * <p>Paths are relative to the server's root, '/'-separated; a leading '/' is allowed and
 * means the root. Every failure is a {@link io.gpudirect.GpuDirectException} whose message
 * names the server and the path.
 */
public interface RemoteStore extends AutoCloseable {

  /** The server this store talks to. */
  InetSocketAddress server();

  /** The transport that carries reads: "tcp" or "rdma". */
  String transport();

  /** Why {@link #transport()} was chosen, in words, for logs and scan metrics. */
  String transportReason();

  /** Metadata of one file or directory. */
  FileEntry stat(String path);

  /**
   * The server's counters (STATUS), by name, in the server's order: what it has served, refused
   * and holds open since it started. Names rather than fields, so a newer server's counters
   * show up unchanged.
   */
  Map<String, Long> status();

  /**
   * Every regular file below {@code path}, recursively, in
   * {@link io.gpudirect.protocol.ListingOrder} (tree order). When {@code path} is
   * a file, the list holds just that file.
   */
  List<FileEntry> list(String path);

  /**
   * Fills {@code dst} from its position to its limit with the bytes of {@code version} of the
   * file (from {@link #stat} or {@link #list}) starting at {@code offset}, and advances its
   * position. The buffer stays owned by the caller; the store writes into it only until the
   * returned future completes. Direct buffers are read into straight from the socket; heap
   * buffers cost one more copy.
   *
   * <p>Fails with an error naming the file when the range runs past the end of the file, and
   * with {@link FileChangedException} when the file is no longer {@code version} (or changes
   * while being read): then none of {@code dst}'s bytes may be used.
   */
  CompletableFuture<Void> readAsync(String path, FileVersion version, long offset, ByteBuffer dst);

  /**
   * As {@link #readAsync(String, FileVersion, long, ByteBuffer)} of whatever the path names
   * when each chunk arrives: for one-off reads only, since a read of several chunks of a file
   * being rewritten may then mix versions.
   */
  default CompletableFuture<Void> readAsync(String path, long offset, ByteBuffer dst) {
    return readAsync(path, FileVersion.ANY, offset, dst);
  }

  /**
   * As {@link #readAsync(String, FileVersion, long, ByteBuffer)}, but the bytes' checksum is
   * left to the caller, who checks it where the bytes go next (the GPU, in device memory,
   * where checking costs the CPU nothing): the future gives the CRC32C the server sent for all
   * of them. Empty when there is none to hand over; the store then checked the bytes itself.
   */
  default CompletableFuture<OptionalInt> readAsyncUnverified(String path, FileVersion version,
      long offset, ByteBuffer dst) {
    return readAsync(path, version, offset, dst).thenApply(v -> OptionalInt.empty());
  }

  /**
   * As {@link #readAsync(String, FileVersion, long, ByteBuffer)} of {@code length} bytes, into
   * memory taken only when they start to arrive (late binding; see {@link PayloadMemory}), so
   * that a read still waiting on the wire holds none. {@code memory.bind()} gives a buffer of
   * {@code length} bytes, the same one on every call; the store may call it on the caller's
   * thread or its own, and need not call it when the read fails before any byte came. The
   * memory is the caller's again once the future completes, failed or not.
   */
  default CompletableFuture<Void> readAsync(String path, FileVersion version, long offset,
      int length, PayloadMemory memory) {
    try {
      return readAsync(path, version, offset, memory.bind());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * As {@link #readAsyncUnverified(String, FileVersion, long, ByteBuffer)}, into memory bound
   * as in {@link #readAsync(String, FileVersion, long, int, PayloadMemory)}.
   */
  default CompletableFuture<OptionalInt> readAsyncUnverified(String path, FileVersion version,
      long offset, int length, PayloadMemory memory) {
    try {
      return readAsyncUnverified(path, version, offset, memory.bind());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Fetches a shuffle block from a server of an executor's shuffle files, into memory that
   * {@code memory} gives for each window of it once the window's answer has said its length (a
   * block longer than the server's maxReadLength comes in several; memory that drains each window
   * as it is in, {@link io.gpudirect.transport.DrainedBlockMemory}, gets windows of a chunk).
   * Completes with the block's length once every window is in and checked. Fails with a
   * {@link RemoteFileException} naming the block when the server refuses it ({@code NOT_FOUND},
   * {@code OUT_OF_RANGE}, {@code CORRUPT_MAP_OUTPUT}), {@link FileChangedException} when its files
   * changed while it was fetched, and with the transport's exceptions, once retries are spent,
   * when the server was lost or the bytes kept arriving corrupt. On failure the memory is the
   * caller's again.
   */
  default CompletableFuture<Long> readShuffleBlock(ShuffleBlockId block, BlockMemory memory) {
    return CompletableFuture.failedFuture(new io.gpudirect.GpuDirectException("Cannot fetch"
        + " shuffle block " + block.name() + " through " + getClass().getSimpleName()
        + ": it reads files only"));
  }

  /**
   * As {@link #readShuffleBlock(ShuffleBlockId, BlockMemory)}, for a block its map status says
   * is {@code expectedLength} bytes long: a request counts that much against its stream's
   * outstanding bytes, not a whole window's most, so that many small blocks can be in flight at
   * once over a long round trip. A block of another length is still read whole.
   */
  default CompletableFuture<Long> readShuffleBlock(ShuffleBlockId block, long expectedLength, BlockMemory memory) {
    return readShuffleBlock(block, memory);
  }

  /** Blocking form of {@link #readAsync(String, FileVersion, long, ByteBuffer)}. */
  void read(String path, FileVersion version, long offset, ByteBuffer dst);

  /** Blocking form of {@link #readAsync(String, long, ByteBuffer)}: any version. */
  default void read(String path, long offset, ByteBuffer dst) {
    read(path, FileVersion.ANY, offset, dst);
  }

  /** Counters since this store was opened. */
  TransferStats stats();

  @Override
  void close();

  /**
   * Reads {@code length} bytes of {@code version} of {@code path} from {@code offset} straight
   * into device memory at {@code deviceAddress}, when this store can (RDMA into registered GPU
   * memory); returns false, having read nothing, when it cannot, and the caller stages through
   * host memory.
   */
  default boolean readIntoDevice(String path, FileVersion version, long offset, long deviceAddress,
      long length) {
    return false;
  }
}
