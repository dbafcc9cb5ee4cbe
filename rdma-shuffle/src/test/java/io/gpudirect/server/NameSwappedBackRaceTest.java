package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.ShuffleDirectories.Placed;
import io.gpudirect.testing.RenameOverLoop;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ABA of a name swapped to another file and back while a file is opened below the root
 * (commit 9363fb9), alone: a map output's data file, and a local user who renames a donor
 * (another map output's data file, the same length) over its name and the own file back, over
 * and over, by hard links so that the own inode comes back each time ({@link RenameOverLoop}).
 * An open whose looks at the name before and after both find the own inode may still have
 * opened the donor in between. A file key is a promise that the channel reads that inode: the
 * map outputs' files kept open for all connections ({@link OpenMapOutputs}) reuse a channel for
 * every later request whose walk finds its key at the name. So whatever claims a key must read
 * that file's bytes; the donor's under the own key is another map output's block served.
 *
 * <p>Seen failing: with 9363fb9's change to {@code RootDirectory.opened} reverted (the key taken
 * from the two looks at the name, not from the descriptor's {@code fstat}) it failed in every
 * run (11 of 11, 2-core build VM shared with other builds, load 5 to 6): in 3 s, 145 to 1983
 * opens below the root and 565 to 10943 through the kept files claimed a key while reading the
 * other file. With the fix, none in 10 runs.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NameSwappedBackRaceTest {
  private static final int LEN = 64;
  /**
   * How long the name flips. One thread opens, not more: two flips must fit into one open, so
   * the renames need a core of their own, and the build machine has two (with two threads
   * opening, the kept files missed the lie in 2 of 5 runs of a second on the code before the fix;
   * raced a second each, apart, the opens below the root missed it in 1 of 18 and the kept files
   * in 1 of 13; interleaved, 3 s, neither missed it in 11).
   */
  private static final Duration RACE = Duration.ofSeconds(3);
  private static final String NAME = "0a/shuffle_3_1_0.data";

  @TempDir Path tmp;
  private byte[] ownBytes;
  private byte[] donorBytes;
  private Object ownKey;
  private Object donorKey;

  /**
   * Each round opens the name twice: below the root, as every walk does, and through the kept
   * files, where a lie pays off (reused by the requests after it). Interleaved, so that both see
   * the whole race, and the kept files see the name changed between their opens more often.
   */
  @Test
  void anOpenWhileTheNameIsSwappedAwayAndBackClaimsOnlyTheKeyOfTheFileItReads() throws Exception {
    // Without fstat the server falls back to the two looks at the name, which this race defeats.
    assertTrue(DescriptorAttributes.available(), "no fstat of open files in this JVM: the build"
        + " gives the server's tests --add-opens of java.base/sun.nio.fs, sun.nio.ch and java.io");
    Path dir = Files.createDirectories(tmp.resolve("blockmgr-aba")).toRealPath();
    Path name = dir.resolve(NAME);
    ownBytes = TestFiles.write(name, LEN, 1);
    Path own = Files.createLink(name.resolveSibling("data.own"), name);
    Path donor = name.resolveSibling("data.donor");
    donorBytes = TestFiles.write(donor, LEN, 2);
    ownKey = Files.readAttributes(own, BasicFileAttributes.class).fileKey();
    donorKey = Files.readAttributes(donor, BasicFileAttributes.class).fileKey();
    RequestedPath path = RequestedPath.of(NAME);
    Opens belowRoot = new Opens("RootDirectory.openFile");
    Opens kept = new Opens("OpenMapOutputs.open");
    try (RootDirectory root = new RootDirectory(dir);
        SharedDirectories subDirectories = new SharedDirectories();
        OpenMapOutputs files = new OpenMapOutputs()) {
      Placed placed = new Placed(root, path, subDirectories);
      long deadline = System.nanoTime() + RACE.toNanos();
      try (RenameOverLoop flips = new RenameOverLoop(name, List.of(donor, own))) {
        while (System.nanoTime() < deadline) {
          belowRoot.count(() -> {
            try (RootDirectory.FoundFile f = root.openFile(path, null, subDirectories)) {
              return new Opened(f.fileKey(), firstBytes(f.channel()));
            }
          });
          kept.count(() -> {
            try (OpenMapOutputs.Lease lease = files.open(placed)) {
              return new Opened(lease.file().fileKey(), firstBytes(lease.file().channel()));
            }
          });
        }
        belowRoot.flips = flips.rounds();
        kept.flips = belowRoot.flips;
      }
    }
    String summary = belowRoot + "; " + kept;
    System.out.println("NameSwappedBackRaceTest: " + summary);
    assertTrue(belowRoot.honest() && kept.honest(), summary);
    // Not vacuous: the name flipped under the opens (some read the donor), and keys were claimed.
    assertTrue(belowRoot.raced() && kept.raced(), summary);
  }

  /** What one open gave: the key it claims (null: none) and the first bytes its channel reads. */
  private record Opened(Object claimedKey, byte[] bytes) {}

  private interface Open {
    Opened open() throws IOException;
  }

  private static byte[] firstBytes(FileChannel channel) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(LEN);
    while (b.hasRemaining() && channel.read(b, b.position()) > 0) {
      // read by position: a kept channel is shared
    }
    return b.array();
  }

  /** What one way of opening saw while the name flipped. */
  private final class Opens {
    final String what;
    long opens;
    long ownClaimed;
    long donorClaimed;
    long unclaimed;
    long donorRead;
    long refused;
    long lies;
    final List<String> wrong = new ArrayList<>();
    long flips;

    Opens(String what) {
      this.what = what;
    }

    void count(Open open) {
      opens++;
      Opened o;
      try {
        o = open.open();
      } catch (RequestRefusedException e) {
        // Not expected (the name never goes missing), but a refusal serves no wrong bytes.
        refused++;
        return;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      boolean readOwn = Arrays.equals(ownBytes, o.bytes());
      boolean readDonor = Arrays.equals(donorBytes, o.bytes());
      if (readDonor) {
        donorRead++;
      }
      if (!readOwn && !readDonor) {
        wrong.add("read neither file's bytes: " + Arrays.toString(Arrays.copyOf(o.bytes(), 8)));
      } else if (o.claimedKey() == null) {
        unclaimed++;
      } else if (o.claimedKey().equals(ownKey)) {
        ownClaimed++;
        lies += readOwn ? 0 : 1;
      } else if (o.claimedKey().equals(donorKey)) {
        donorClaimed++;
        lies += readDonor ? 0 : 1;
      } else {
        wrong.add("claimed the key " + o.claimedKey() + " of neither file");
      }
    }

    boolean honest() {
      return lies == 0 && wrong.isEmpty();
    }

    boolean raced() {
      return flips > 100 && donorRead > 0 && ownClaimed > 0;
    }

    @Override
    public String toString() {
      return what + ": " + opens + " opens (" + ownClaimed + " claimed the own file's key, "
          + donorClaimed + " the donor's, " + unclaimed + " none; " + donorRead + " read the"
          + " donor, " + refused + " refused) during " + flips + " rounds of renames (the donor"
          + " over the name, the own file back), " + lies + " claimed a key while reading the"
          + " other file; other wrong answers: " + wrong.stream().limit(5).toList();
    }
  }
}
