package io.gpudirect.server;

import io.gpudirect.DaemonThreads;
import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * The block manager directories of one Spark executor, whose shuffle files a server serves: the
 * {@code blockmgr-UUID} directory Spark makes under each of its local directories
 * ({@code spark.local.dir}), in the order its {@code DiskBlockManager} holds them, each held
 * open as a {@link RootDirectory} (read-only, every name resolved from the open directory, no
 * symlink followed). A reducer names a block; the file names and the directory they are in come
 * from here alone, as Spark places them, so no request can name a path.
 *
 * <p>Spark's placement ({@code DiskBlockManager.getFile}, {@code ExecutorDiskUtils}): the file
 * name's non-negative hash ({@code String.hashCode}, its absolute value, 0 for
 * {@code Integer.MIN_VALUE}) modulo the number of directories picks the directory, and the hash
 * divided by that number, modulo {@code spark.diskStore.subDirectories} (64 by default), the
 * sub-directory, named in two lower-case hex digits. A map output's index and data files are
 * placed by their own names, so they may well be in different directories.
 */
final class ShuffleDirectories implements AutoCloseable {
  /** Spark's {@code spark.diskStore.subDirectories} default. */
  static final int SPARK_SUB_DIRECTORIES = 64;

  /**
   * A file of a map output: the directory Spark put it in, its path below it, and that
   * directory's sub-directories kept open for walks ({@link #open(Placed)}).
   */
  record Placed(RootDirectory directory, RequestedPath path, SharedDirectories subDirectories) {
    String show() {
      return directory.path().resolve(path.normalized()).toString();
    }
  }

  private final List<RootDirectory> directories;
  /** Each directory's sub-directories kept open, by the directory's place in {@link #directories}. */
  private final List<SharedDirectories> subDirectoriesKept;
  private final int subDirectories;
  private final MapOutputIndex.Checked checked = new MapOutputIndex.Checked();
  /** Spark's partition checksums of the map outputs, or null where its writers keep none. */
  private final ChecksumAlgorithm checksumAlgorithm;
  private final MapOutputChecksums checksums = new MapOutputChecksums();
  private final OpenMapOutputs files = new OpenMapOutputs();
  /**
   * Where connections find the windows of the requests they have read ahead of the answer they
   * are sending ({@link ShuffleAnswers}). Unbounded on purpose, as {@link FileOpeners}: each
   * connection finds one window ahead at a time, so the threads working are bounded by the
   * connections.
   */
  private final ExecutorService finders = Executors.newCachedThreadPool(
      DaemonThreads.numbered("gpudirect-server-find"));

  private ShuffleDirectories(List<RootDirectory> directories, int subDirectories,
      ChecksumAlgorithm checksumAlgorithm) {
    this.directories = directories;
    this.subDirectoriesKept = directories.stream().map(d -> new SharedDirectories()).toList();
    this.subDirectories = subDirectories;
    this.checksumAlgorithm = checksumAlgorithm;
  }

  /**
   * Opens every directory; a missing or unreadable one fails the start, naming it.
   * {@code checksumAlgorithm}: that of the partition checksums Spark's writers keep beside the
   * map outputs, or null for none.
   */
  static ShuffleDirectories open(List<Path> localDirectories, int subDirectories,
      ChecksumAlgorithm checksumAlgorithm) {
    List<RootDirectory> opened = new ArrayList<>();
    for (Path d : localDirectories) {
      try {
        opened.add(new RootDirectory(d));
      } catch (IOException e) {
        opened.forEach(RootDirectory::close);
        throw new GpuDirectException("Cannot serve the shuffle directory " + d + ": "
            + e.getMessage() + "; give the block manager's local directories (blockmgr-*) of a"
            + " running executor", e);
      }
    }
    return new ShuffleDirectories(List.copyOf(opened), subDirectories, checksumAlgorithm);
  }

  /** Where Spark puts a map output's index file. */
  Placed index(ShuffleBlockId block) {
    return place("shuffle_" + block.shuffleId() + "_" + block.mapId() + "_0.index");
  }

  /** Where Spark puts a map output's data file. */
  Placed data(ShuffleBlockId block) {
    return place("shuffle_" + block.shuffleId() + "_" + block.mapId() + "_0.data");
  }

  /**
   * Where Spark puts a map output's partition checksums ({@code ShuffleChecksumBlockId}'s name and
   * the algorithm as extension); only with a {@link #checksumAlgorithm}.
   */
  Placed checksumFile(ShuffleBlockId block) {
    return place("shuffle_" + block.shuffleId() + "_" + block.mapId() + "_0.checksum." + checksumAlgorithm.name());
  }

  ChecksumAlgorithm checksumAlgorithm() {
    return checksumAlgorithm;
  }

  /** Where blocks' partition checksums are read from the map outputs' checksum files. */
  MapOutputChecksums mapOutputChecksums() {
    return checksums;
  }

  /** Where Spark's block manager puts the file {@code name}. */
  Placed place(String name) {
    int hash = nonNegativeHash(name);
    int d = hash % directories.size();
    int sub = (hash / directories.size()) % subDirectories;
    return new Placed(directories.get(d), RequestedPath.of(String.format("%02x", sub) + "/" + name),
        subDirectoriesKept.get(d));
  }

  /**
   * The regular file {@code file} names, kept open between requests or opened, through its
   * directory's kept sub-directories; the caller closes the lease. Refused as any open below a
   * root is.
   */
  OpenMapOutputs.Lease open(Placed file) {
    return files.open(file);
  }

  /** The map outputs' files kept open, and the leases on them (for tests). */
  OpenMapOutputs openFiles() {
    return files;
  }

  /** Where windows are found ahead of their turn (see {@link ShuffleAnswers}). */
  Executor finders() {
    return finders;
  }

  /** Closes the map outputs' files unused since {@code idleNanos} before {@code now}. */
  void closeIdleFiles(long now, long idleNanos) {
    files.closeIdle(now, idleNanos);
  }

  /** The map outputs whose index was found good, by version: see {@link MapOutputIndex}. */
  MapOutputIndex.Checked checked() {
    return checked;
  }

  /** Spark's {@code JavaUtils.nonNegativeHash} of a string. */
  static int nonNegativeHash(String s) {
    int h = s.hashCode();
    return h == Integer.MIN_VALUE ? 0 : Math.abs(h);
  }

  /** The directories, for logs and messages. */
  String describe() {
    return directories.stream().map(d -> d.path().toString()).collect(Collectors.joining(", "));
  }

  @Override
  public void close() {
    // A find under way ends (an open blocked on a FIFO is given up on by its opener) and its
    // connection closes what it found; one not started is refused.
    finders.shutdown();
    files.close();
    subDirectoriesKept.forEach(SharedDirectories::close);
    directories.forEach(RootDirectory::close);
  }
}
