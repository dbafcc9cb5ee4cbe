package io.gpudirect.testing;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * Map outputs written by hand as Spark's sort shuffle writes them, for tests of the refusals
 * that a real Spark never writes: under an executor's block manager directories, each file in
 * the directory and two-hex-digit sub-directory Spark's {@code DiskBlockManager.getFile} picks
 * from the hash of its name; the data file holds the partitions one after another, the index
 * {@code partitions + 1} big-endian offsets; both written beside and renamed into place, and no
 * data file at all for a map output with no bytes. (The connector's shuffle test checks the
 * same layout against files a real Spark wrote.)
 */
public final class SparkShuffleLayout {
  private final List<Path> localDirs;
  private final int subDirs;

  public SparkShuffleLayout(List<Path> localDirs, int subDirs) {
    this.localDirs = List.copyOf(localDirs);
    this.subDirs = subDirs;
  }

  public List<Path> localDirs() {
    return localDirs;
  }

  /** Where Spark's block manager keeps the file {@code name}. */
  public Path file(String name) {
    int h = name.hashCode();
    int hash = h == Integer.MIN_VALUE ? 0 : Math.abs(h);
    Path dir = localDirs.get(hash % localDirs.size());
    return dir.resolve(String.format("%02x", (hash / localDirs.size()) % subDirs)).resolve(name);
  }

  public Path index(int shuffleId, long mapId) {
    return file("shuffle_" + shuffleId + "_" + mapId + "_0.index");
  }

  public Path data(int shuffleId, long mapId) {
    return file("shuffle_" + shuffleId + "_" + mapId + "_0.data");
  }

  /** Where Spark keeps a map output's partition checksums of {@code algorithm} (its name, upper case). */
  public Path checksums(int shuffleId, long mapId, String algorithm) {
    return file("shuffle_" + shuffleId + "_" + mapId + "_0.checksum." + algorithm);
  }

  /**
   * Writes one map output of these partitions' bytes and, as Spark's writer does with
   * {@code spark.shuffle.checksum.enabled}, its checksum file: each partition's checksum of
   * {@code algorithm} (a JDK {@link java.util.zip.Checksum}, fresh per partition) as a long.
   */
  public void writeWithChecksums(int shuffleId, long mapId, String algorithm,
      java.util.function.Supplier<java.util.zip.Checksum> checksum, byte[]... partitions) throws IOException {
    long[] values = new long[partitions.length];
    for (int i = 0; i < partitions.length; i++) {
      java.util.zip.Checksum c = checksum.get();
      c.update(partitions[i], 0, partitions[i].length);
      values[i] = c.getValue();
    }
    write(shuffleId, mapId, partitions);
    writeChecksums(shuffleId, mapId, algorithm, values);
  }

  /** Writes a checksum file of exactly these values (for ones that lie). */
  public void writeChecksums(int shuffleId, long mapId, String algorithm, long... values) throws IOException {
    Path file = checksums(shuffleId, mapId, algorithm);
    Files.createDirectories(file.getParent());
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(file))) {
      for (long v : values) {
        out.writeLong(v);
      }
    }
  }

  /** Writes one map output of these partitions' bytes. */
  public void write(int shuffleId, long mapId, byte[]... partitions) throws IOException {
    long[] offsets = new long[partitions.length + 1];
    for (int i = 0; i < partitions.length; i++) {
      offsets[i + 1] = offsets[i] + partitions[i].length;
    }
    if (offsets[partitions.length] > 0) {
      Path data = data(shuffleId, mapId);
      Files.createDirectories(data.getParent());
      Path tmp = data.resolveSibling(data.getFileName() + ".tmp");
      try (OutputStream out = Files.newOutputStream(tmp)) {
        for (byte[] p : partitions) {
          out.write(p);
        }
      }
      Files.move(tmp, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
    writeIndex(shuffleId, mapId, offsets);
  }

  /** Writes an index of exactly these offsets (for malformed ones). */
  public void writeIndex(int shuffleId, long mapId, long... offsets) throws IOException {
    Path index = index(shuffleId, mapId);
    Files.createDirectories(index.getParent());
    Path tmp = index.resolveSibling(index.getFileName() + ".tmp");
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(tmp))) {
      for (long o : offsets) {
        out.writeLong(o);
      }
    }
    Files.move(tmp, index, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
