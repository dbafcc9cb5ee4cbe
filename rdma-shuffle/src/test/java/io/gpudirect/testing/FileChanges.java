package io.gpudirect.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Random;

/**
 * The ways a file changes under a reader, done as writers do them, for tests that change a
 * file between two reads of it. Each returns the file's new bytes (none for a deletion).
 */
public enum FileChanges {
  /** A same-size file written beside it and renamed over it ({@code mv}): a new inode. */
  RENAMED_OVER {
    @Override
    public byte[] apply(Path file, long seed) throws IOException {
      Path tmp = file.resolveSibling(file.getFileName() + ".new");
      byte[] bytes = TestFiles.write(tmp, (int) Files.size(file), seed);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return bytes;
    }
  },
  /** Overwritten in place with new bytes of the same size: same inode, same size. */
  OVERWRITTEN {
    @Override
    public byte[] apply(Path file, long seed) throws IOException {
      byte[] bytes = new byte[(int) Files.size(file)];
      new Random(seed).nextBytes(bytes);
      try (FileChannel fc = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
          fc.write(b, b.position());
        }
      }
      return bytes;
    }
  },
  /** Cut to half its size in place. */
  TRUNCATED {
    @Override
    public byte[] apply(Path file, long seed) throws IOException {
      try (FileChannel fc = FileChannel.open(file, StandardOpenOption.WRITE)) {
        fc.truncate(fc.size() / 2);
      }
      return Files.readAllBytes(file);
    }
  },
  /** Deleted. */
  DELETED {
    @Override
    public byte[] apply(Path file, long seed) throws IOException {
      Files.delete(file);
      return new byte[0];
    }
  };

  /** Changes {@code file}; new bytes come from {@code seed}. */
  public abstract byte[] apply(Path file, long seed) throws IOException;

  /**
   * Writes a file as one that existed before its reader came: modified a minute ago. A file
   * written and then changed within the same tick of the file system's clock keeps its
   * modification time (see FileVersion); a file that readers find already there does not.
   */
  public static byte[] writeSettled(Path file, int size, long seed) throws IOException {
    byte[] bytes = TestFiles.write(file, size, seed);
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(60)));
    return bytes;
  }
}
