package io.gpudirect.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.TimeUnit;

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
  /**
   * A range rewritten in place, same length, and the exact modification time put back
   * ({@code utimensat} to the nanosecond), as attack 6 of issue 28 did: 1 MiB (a quarter of a
   * smaller file) at three quarters of the file. Identity, size and modification time are all
   * as they were; only the change time, which no user can set, has moved.
   */
  OVERWRITTEN_MTIME_PUT_BACK {
    @Override
    public byte[] apply(Path file, long seed) throws IOException {
      FileTime modified = Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS);
      awaitChangeTimeAfter(file);
      long size = Files.size(file);
      byte[] patch = new byte[(int) Math.min(1 << 20, size / 4)];
      new Random(seed).nextBytes(patch);
      try (FileChannel fc = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(patch);
        long at = size - size / 4;
        while (b.hasRemaining()) {
          fc.write(b, at + b.position());
        }
      }
      Files.setLastModifiedTime(file, modified);
      FileTime now = Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS);
      if (!now.equals(modified) || Files.size(file) != size) {
        throw new IllegalStateException("Cannot put the modification time of " + file + " back to "
            + modified + " (it is " + now + "): this file system keeps coarser times");
      }
      return Files.readAllBytes(file);
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
   * Returns once a change made now gets a later change time than {@code file}'s. File systems
   * stamp changes from a clock that ticks every few milliseconds (Linux before 6.13, and file
   * systems without fine-grained stamps), so a change within the tick of the file's last would
   * leave its change time as it was: the limit docs/security.md names, not what a test of a
   * change means to try. A probe beside the file (same file system, same granularity) is
   * written until its change time is later, which takes at most one tick.
   */
  public static void awaitChangeTimeAfter(Path file) throws IOException {
    FileTime last = changeTime(file);
    Path probe = file.resolveSibling("." + file.getFileName() + ".tick");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    try {
      do {
        Files.write(probe, new byte[] {1});
        if (changeTime(probe).compareTo(last) > 0) {
          return;
        }
      } while (System.nanoTime() < deadline);
      throw new IllegalStateException("The change time of " + probe + " did not pass " + last
          + " in 10 s");
    } finally {
      Files.deleteIfExists(probe);
    }
  }

  /** The change time ({@code ctime}) of {@code file} itself, to the nanosecond where kept. */
  public static FileTime changeTime(Path file) throws IOException {
    return (FileTime) Files.getAttribute(file, "unix:ctime", LinkOption.NOFOLLOW_LINKS);
  }

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
