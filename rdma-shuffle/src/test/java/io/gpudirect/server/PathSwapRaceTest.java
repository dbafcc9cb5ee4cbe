package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.RemoteFileException;
import io.gpudirect.client.TransportSelector;
import io.gpudirect.testing.RenameLoop;
import io.gpudirect.verbs.LoopbackVerbsDouble;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attack of issue 13 on a real server: while a local user who may rename entries below the
 * root swaps a directory for a symlink that leads out of it, and back, as fast as renames go,
 * clients read, stat and list through the swapped name. Outside the root lie files of the same
 * names, with other bytes and twice the size; no answer may ever carry either. Reads rotate
 * over more files than a connection keeps open ({@link OpenFiles#MAX_OPEN}), so that they keep
 * opening files rather than reusing one opened before the race began.
 *
 * <p>Before the fix (commit d6a1532, which checked each name with lstat and then opened by
 * path) the TCP test saw thousands of escapes in 10 s; see docs/security.md.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PathSwapRaceTest {
  static final int FILES = OpenFiles.MAX_OPEN * 2;
  static final int LEN = 64;
  static final byte[] SECRET = Arrays.copyOf(
      "bytes from outside the server root; never to be served!".getBytes(), LEN * 2);

  @TempDir Path tmp;

  @Test
  void aDirectorySwappedForASymlinkOutOfTheRootNeverLeaksOverTcp() throws Exception {
    Path root = layout();
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start()) {
      Race race = race(root, Duration.ofSeconds(10), 4, () -> BlockClient.connect(
          address(server), ClientConfig.builder().streams(1).maxRetries(0).build()));
      race.assertNoEscapes();
    }
  }

  /**
   * The same race for the RDMA side's file access, over {@link LoopbackVerbsDouble} (a TEST
   * DOUBLE of the verbs: there is no RDMA device here; the server's code above them is real).
   */
  @Test
  void aDirectorySwappedForASymlinkOutOfTheRootNeverLeaksOverRdma() throws Exception {
    Path root = layout();
    LoopbackVerbsDouble verbs = new LoopbackVerbsDouble();
    try (BlockServer server = BlockServer.builder().root(root).port(0).rdma(RdmaMode.ON)
        .verbs(() -> verbs).build().start()) {
      Race race = race(root, Duration.ofSeconds(5), 2, () -> BlockClient.connect(address(server),
          ClientConfig.builder().streams(1).maxRetries(0).transport("rdma").build(),
          new TransportSelector(() -> verbs)));
      race.assertNoEscapes();
    }
  }

  /**
   * Part 2 of issue 13: a FIFO swapped in for a file, and one for a directory on the way to
   * files, while clients read through both names and a bystander reads other files. Opening a
   * FIFO for reading blocks until a writer comes; before the fix a connection whose open met
   * one hung for good. Now every request is answered (served or refused), the bystander is
   * served throughout, and the racing connections still answer once the race is over.
   */
  @Test
  void aFifoSwappedInForAFileOrADirectoryNeverHoldsAConnection() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root")).toRealPath();
    for (int i = 0; i < FILES; i++) {
      Files.createDirectories(root.resolve("dd"));
      Files.write(root.resolve("dd/x" + i + ".bin"), inside(i));
      Files.createDirectories(root.resolve("calm"));
      Files.write(root.resolve("calm/c" + i + ".bin"), inside(100 + i));
    }
    Files.write(root.resolve("swap.bin"), inside(99));
    mkfifo(root.resolve("swap.fifo"));
    mkfifo(root.resolve("dd.fifo"));
    ClientConfig config = ClientConfig.builder().streams(1).maxRetries(0)
        .requestTimeout(Duration.ofSeconds(20)).build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Race racing = new Race();
    Race bystander = new Race();
    AtomicLong slowestBystanderNanos = new AtomicLong();
    List<BlockClient> clients = new ArrayList<>();
    try (BlockServer server = BlockServer.builder().root(root).port(0).build().start();
        AutoCloseable closeClients = () -> clients.forEach(BlockClient::close)) {
      List<Thread> threads = new ArrayList<>();
      try (RenameLoop fileLoop = new RenameLoop(root.resolve("swap.bin"), root.resolve("swap.fifo"),
          root.resolve("swap.aside"));
          RenameLoop dirLoop = new RenameLoop(root.resolve("dd"), root.resolve("dd.fifo"),
              root.resolve("dd.aside"))) {
        for (int t = 0; t < 3; t++) {
          BlockClient c = BlockClient.connect(address(server), config);
          clients.add(c);
          threads.add(new Thread(() -> {
            for (int k = 0; System.nanoTime() < deadline; k++) {
              String path = k % 2 == 0 ? "swap.bin" : "dd/x" + (k % FILES) + ".bin";
              expectInsideOrRefused(c, path, k % 2 == 0 ? inside(99) : inside(k % FILES), racing);
            }
          }, "test-fifo-racer-" + t));
        }
        // STAT and LIST keep no directory open between requests: each opens "dd" anew.
        BlockClient lister = BlockClient.connect(address(server), config);
        clients.add(lister);
        threads.add(new Thread(() -> {
          for (int k = 0; System.nanoTime() < deadline; k++) {
            racing.reads.incrementAndGet();
            try {
              if (k % 2 == 0) {
                int n = lister.list("dd").size();
                if (n != FILES) {
                  racing.wrong.add("listed " + n + " files in dd");
                }
              } else {
                lister.stat("dd/x" + (k % FILES) + ".bin");
              }
              racing.served.incrementAndGet();
            } catch (RemoteFileException refused) {
              racing.refused.incrementAndGet();
            } catch (RuntimeException e) {
              racing.wrong.add("stat/list: " + e);
            }
          }
        }, "test-fifo-lister"));
        BlockClient calm = BlockClient.connect(address(server), config);
        clients.add(calm);
        threads.add(new Thread(() -> {
          for (int k = 0; System.nanoTime() < deadline; k++) {
            long start = System.nanoTime();
            expectInsideOrRefused(calm, "calm/c" + (k % FILES) + ".bin", inside(100 + k % FILES),
                bystander);
            slowestBystanderNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
          }
        }, "test-bystander"));
        threads.forEach(Thread::start);
        for (Thread t : threads) {
          t.join();
        }
        racing.swaps = fileLoop.rounds();
        bystander.swaps = dirLoop.rounds();
      }
      // The race is over: every racing connection still answers.
      for (BlockClient c : clients) {
        ByteBuffer dst = ByteBuffer.allocate(LEN);
        c.read("calm/c1.bin", 0, dst);
        assertTrue(Arrays.equals(inside(101), dst.array()));
      }
      FileOpeners openers = server.context().root().openers();
      String summary = "racing: " + racing.reads + " reads, " + racing.served + " served, "
          + racing.refused + " refused, " + racing.swaps + " file swaps; bystander: "
          + bystander.reads + " reads, " + bystander.served + " served, slowest "
          + TimeUnit.NANOSECONDS.toMillis(slowestBystanderNanos.get()) + " ms; "
          + bystander.swaps + " directory swaps; opens blocked on a FIFO and released: "
          + openers.released() + ", left behind: " + openers.leftBehind()
          + "; wrong answers: " + racing.wrong.stream().limit(5).toList()
          + bystander.wrong.stream().limit(5).toList();
      System.out.println("PathSwapRaceTest FIFO: " + summary);
      // Openers still blocked on a FIFO when their requests were given up on: release them.
      release(root.resolve("swap.fifo"));
      release(root.resolve("dd.fifo"));
      assertTrue(racing.wrong.isEmpty() && bystander.wrong.isEmpty(), summary);
      assertEquals(bystander.reads.get(), bystander.served.get(), summary);
      assertTrue(racing.served.get() > 0 && racing.swaps > 100 && bystander.swaps > 100, summary);
    }
  }

  private static void expectInsideOrRefused(BlockClient c, String path, byte[] expected, Race race) {
    ByteBuffer dst = ByteBuffer.allocate(LEN);
    race.reads.incrementAndGet();
    try {
      c.read(path, 0, dst);
    } catch (RemoteFileException refused) {
      race.refused.incrementAndGet();
      return;
    } catch (RuntimeException e) {
      race.wrong.add(path + ": " + e);
      return;
    }
    if (Arrays.equals(expected, dst.array())) {
      race.served.incrementAndGet();
    } else {
      race.wrong.add(path + " read other bytes");
    }
  }

  private static void mkfifo(Path p) throws Exception {
    assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).start().waitFor());
  }

  /** Opens a FIFO read-write and closes it: any open blocked on it returns. */
  private static void release(Path fifo) throws Exception {
    try (var ch = Files.newByteChannel(fifo, java.nio.file.StandardOpenOption.READ,
        java.nio.file.StandardOpenOption.WRITE)) {
      // opened: that is all it takes
    }
  }

  /** root/d/f*.bin inside (LEN bytes each); outside/f*.bin the secret; root/d.link -> outside. */
  private Path layout() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root")).toRealPath();
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    Files.createDirectories(root.resolve("d"));
    for (int i = 0; i < FILES; i++) {
      Files.write(root.resolve("d").resolve("f" + i + ".bin"), inside(i));
      Files.write(outside.resolve("f" + i + ".bin"), SECRET);
    }
    Files.createSymbolicLink(root.resolve("d.link"), outside);
    return root;
  }

  static byte[] inside(int i) {
    byte[] b = new byte[LEN];
    new Random(i).nextBytes(b);
    return b;
  }

  interface Clients {
    BlockClient connect();
  }

  /** What the readers saw while the rename loop ran. */
  static final class Race {
    final AtomicLong reads = new AtomicLong();
    final AtomicLong served = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong escapes = new AtomicLong();
    final AtomicLong metadataEscapes = new AtomicLong();
    final AtomicLong metadataServed = new AtomicLong();
    final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
    long swaps;

    void assertNoEscapes() {
      String summary = reads + " reads (" + served + " served, " + refused + " refused), "
          + swaps + " swaps, " + metadataServed + " stats/lists served: " + escapes
          + " reads and " + metadataEscapes + " stats/lists escaped; wrong answers: " + wrong.stream().limit(5).toList();
      System.out.println("PathSwapRaceTest: " + summary);
      assertEquals(0, escapes.get() + metadataEscapes.get(), summary);
      assertTrue(wrong.isEmpty(), summary);
      // Not vacuous: the readers were served while the race ran, and the race did run.
      assertTrue(served.get() > 0 && swaps > 100, summary);
    }
  }

  private static Race race(Path root, Duration length, int readers, Clients clients)
      throws Exception {
    Race race = new Race();
    long deadline = System.nanoTime() + length.toNanos();
    List<Thread> threads = new ArrayList<>();
    List<BlockClient> opened = new ArrayList<>();
    try (RenameLoop loop = new RenameLoop(root.resolve("d"), root.resolve("d.link"),
        root.resolve("d.aside"))) {
      for (int t = 0; t < readers; t++) {
        BlockClient client = clients.connect();
        opened.add(client);
        int first = t;
        threads.add(new Thread(() -> read(client, first, deadline, race), "test-reader-" + t));
      }
      BlockClient meta = clients.connect();
      opened.add(meta);
      threads.add(new Thread(() -> statAndList(meta, deadline, race), "test-lister"));
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
      race.swaps = loop.rounds();
    } finally {
      opened.forEach(BlockClient::close);
    }
    return race;
  }

  private static void read(BlockClient client, int first, long deadline, Race race) {
    ByteBuffer dst = ByteBuffer.allocate(LEN);
    for (int k = first; System.nanoTime() < deadline; k++) {
      int i = k % FILES;
      race.reads.incrementAndGet();
      dst.clear();
      try {
        client.read("d/f" + i + ".bin", 0, dst);
      } catch (RemoteFileException refused) {
        race.refused.incrementAndGet();
        continue;
      } catch (RuntimeException e) {
        race.wrong.add(e.toString());
        continue;
      }
      byte[] got = dst.array();
      if (Arrays.equals(got, Arrays.copyOf(SECRET, LEN))) {
        race.escapes.incrementAndGet();
      } else if (Arrays.equals(got, inside(i))) {
        race.served.incrementAndGet();
      } else {
        race.wrong.add("d/f" + i + ".bin read " + Arrays.toString(Arrays.copyOf(got, 8)));
      }
    }
  }

  /**
   * A STAT or LIST that reports a file of the outside's size has looked outside the root. The
   * root's listing meets the swapped name as a subdirectory its walk enters, "d"'s as its start.
   */
  private static void statAndList(BlockClient client, long deadline, Race race) {
    for (int k = 0; System.nanoTime() < deadline; k++) {
      try {
        List<FileEntry> entries = switch (k % 3) {
          case 0 -> List.of(client.stat("d/f" + (k % FILES) + ".bin"));
          case 1 -> client.list("d");
          default -> client.list("");
        };
        race.metadataServed.incrementAndGet();
        for (FileEntry e : entries) {
          if (e.length() == SECRET.length) {
            race.metadataEscapes.incrementAndGet();
          }
        }
      } catch (RemoteFileException refused) {
        // the name was missing or a link just then
      } catch (RuntimeException e) {
        race.wrong.add(e.toString());
      }
    }
  }

  private static InetSocketAddress address(BlockServer server) {
    return new InetSocketAddress("127.0.0.1", server.port());
  }
}
