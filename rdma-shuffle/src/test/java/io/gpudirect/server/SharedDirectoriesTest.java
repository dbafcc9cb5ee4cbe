package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpudirect.server.RootDirectory.FoundFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shuffle directory's sub-directories, kept open for every connection's walks: each opened
 * once however many files are opened in it, shared by walks on many threads, a replaced one (or
 * a link put in its place) never walked through, and at most {@link SharedDirectories#MAX_HELD}
 * held.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedDirectoriesTest {
  @TempDir Path tmp;

  private Path shuffleDirectory(int subDirectories, int filesEach) throws IOException {
    Path root = Files.createDirectories(tmp.resolve("blockmgr-test")).toRealPath();
    for (int s = 0; s < subDirectories; s++) {
      Path sub = Files.createDirectories(root.resolve(String.format("%02x", s)));
      for (int f = 0; f < filesEach; f++) {
        Files.write(sub.resolve("shuffle_0_" + f + "_0.data"), new byte[] {(byte) s, (byte) f});
      }
    }
    return root;
  }

  private static byte[] read(RootDirectory root, SharedDirectories kept, String path) throws IOException {
    try (FoundFile f = root.openFile(RequestedPath.of(path), null, kept)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate((int) f.size());
      f.channel().read(b, 0);
      return b.array();
    }
  }

  @Test
  void eachSubDirectoryIsOpenedOnceForAllItsFiles() throws Exception {
    Path dir = shuffleDirectory(4, 8);
    try (RootDirectory root = new RootDirectory(dir); SharedDirectories kept = new SharedDirectories()) {
      for (int round = 0; round < 3; round++) {
        for (int s = 0; s < 4; s++) {
          for (int f = 0; f < 8; f++) {
            byte[] b = read(root, kept, String.format("%02x/shuffle_0_%d_0.data", s, f));
            assertEquals(s, b[0]);
            assertEquals(f, b[1]);
          }
        }
      }
      assertEquals(4, kept.held());
    }
  }

  @Test
  void walksOnManyThreadsShareTheKeptDirectories() throws Exception {
    Path dir = shuffleDirectory(16, 16);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try (RootDirectory root = new RootDirectory(dir); SharedDirectories kept = new SharedDirectories()) {
      List<Future<?>> reads = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        reads.add(threads.submit(() -> {
          for (int round = 0; round < 20; round++) {
            for (int s = 0; s < 16; s++) {
              int f = (round + s) % 16;
              byte[] b = read(root, kept, String.format("%02x/shuffle_0_%d_0.data", s, f));
              assertEquals(s, b[0]);
              assertEquals(f, b[1]);
            }
          }
          return null;
        }));
      }
      for (Future<?> r : reads) {
        r.get();
      }
      // Two walks may keep the same name at once: the one displaced is retired, not closed under the other.
      assertEquals(16, kept.held() - retired(kept));
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aReplacedSubDirectoryIsWalkedAfreshAndALinkInItsPlaceRefused() throws Exception {
    Path dir = shuffleDirectory(1, 1);
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Files.write(outside.resolve("shuffle_0_0_0.data"), new byte[] {9, 9});
    try (RootDirectory root = new RootDirectory(dir); SharedDirectories kept = new SharedDirectories()) {
      assertEquals(0, read(root, kept, "00/shuffle_0_0_0.data")[0]);
      Files.move(dir.resolve("00"), dir.resolve("00-old"));
      Files.createDirectories(dir.resolve("00"));
      Files.write(dir.resolve("00/shuffle_0_0_0.data"), new byte[] {5, 5});
      assertEquals(5, read(root, kept, "00/shuffle_0_0_0.data")[0], "served from the directory kept before");
      Files.delete(dir.resolve("00/shuffle_0_0_0.data"));
      Files.delete(dir.resolve("00"));
      Files.createSymbolicLink(dir.resolve("00"), outside);
      assertThrows(RequestRefusedException.class, () -> read(root, kept, "00/shuffle_0_0_0.data"));
    }
  }

  @Test
  void heldDirectoriesAreBounded() throws Exception {
    int subs = SharedDirectories.MAX_HELD + 8;
    Path dir = shuffleDirectory(subs, 1);
    try (RootDirectory root = new RootDirectory(dir); SharedDirectories kept = new SharedDirectories()) {
      for (int s = 0; s < subs; s++) {
        assertEquals(s & 0xff, read(root, kept, String.format("%02x/shuffle_0_0_0.data", s))[0] & 0xff);
      }
      assertEquals(SharedDirectories.MAX_HELD, kept.held());
    }
  }

  private static int retired(SharedDirectories kept) {
    return kept.held() - kept.keptCount();
  }
}
