package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.RemoteFileException;
import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.testing.AttackLoop;
import io.gpudirect.testing.RenameLoop;
import io.gpudirect.testing.RenameOverLoop;
import io.gpudirect.testing.SparkShuffleLayout;
import io.gpudirect.transport.ChecksumMismatchException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import java.util.zip.Adler32;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks of docs/security.md's threat model on an executor's shuffle server, where they
 * would pay off: at the handles it keeps open across requests and connections (sub-directories
 * in {@link SharedDirectories}, map outputs' files in {@link OpenMapOutputs}). A local user who
 * may write into the block manager's directory (another user, or a task of another application
 * sharing the disk) swaps what the names Spark placed hold, as fast as renames go, while
 * reducers fetch those blocks over real connections (SHUFFLE_READ on loopback, no retries, so
 * that each answer is seen as the server gave it). Every fetch must give exactly the block's
 * bytes or a refusal naming the block; never bytes from outside the block manager's directory
 * (marker files of the same names, consistent, so that a server that followed would serve them
 * as good), never another map output's bytes taken as the block's, never a mix; every fetch is
 * answered within {@link #FETCH_DEADLINE}; the server serves a clean block afterwards and holds
 * no descriptor of a map output once idle ({@code /proc/self/fd}: the server runs in this JVM).
 *
 * <p>Each storm asserts that it raced: the loops swapped while fetches ran, some fetches met
 * the swapped state (were refused) and some were served. Map outputs are written by hand in
 * Spark's layout ({@link SparkShuffleLayout}); races 1, 3 and 4 use map ids whose index and data
 * Spark puts in the same sub-directory (with one block manager directory and 64 sub-directories
 * only {@code 02}, {@code 1e}, {@code 22} and {@code 3e} get both).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleDirectorySwapRaceTest {
  private static final byte[] SECRET = "shuffle-directory-swap-race".getBytes();
  private static final int SHUFFLE = 3;
  private static final int SUB_DIRECTORIES = 64;
  private static final int PARTITIONS = 4;
  private static final Duration STORM = Duration.ofSeconds(3);
  /** Connections fetching the raced blocks at once. */
  private static final int FETCHERS = 3;
  /** The slowest answer allowed: a FIFO's open is given up on after 2 s ({@link FileOpeners}). */
  private static final Duration FETCH_DEADLINE = Duration.ofSeconds(10);
  /** More files than {@link OpenMapOutputs} keeps, fetched in turn: every fetch opens its files. */
  private static final int MAPS_BEYOND_KEPT = OpenMapOutputs.MAX_OPEN / 2 + 8;
  /**
   * The refusals a swap may cause: the block's files missing, a link, a FIFO, an index that does
   * not fit the data file found, a file changed while it was read or renamed over while opened.
   */
  private static final Set<ErrorCode> REFUSALS = EnumSet.of(ErrorCode.NOT_FOUND, ErrorCode.OUTSIDE_ROOT,
      ErrorCode.NOT_A_FILE, ErrorCode.CORRUPT_MAP_OUTPUT, ErrorCode.FILE_CHANGED);

  @TempDir Path tmp;
  private Path blockManager;
  private Path outside;
  private SparkShuffleLayout layout;

  @BeforeEach
  void directories() throws IOException {
    blockManager = Files.createDirectories(tmp.resolve("disk/blockmgr-race")).toRealPath();
    outside = Files.createDirectories(tmp.resolve("outside")).toRealPath();
    layout = new SparkShuffleLayout(List.of(blockManager), SUB_DIRECTORIES);
  }

  /**
   * Attack 1: sub-directory {@code 02}, holding the index and data of more map outputs than the
   * server keeps open (so fetches keep opening files in it), swapped for a symlink to a directory
   * outside holding the same map outputs with marker bytes, then for a copy of itself, the link
   * again, and back: the copy is another directory, which the server opens afresh rather than use
   * the one it keeps, and keeps in its turn, until it keeps no more ({@link
   * SharedDirectories#MAX_HELD}) and every walk opens {@code 02}, each open a chance to follow
   * the link.
   */
  @Test
  void aSubDirectorySwappedForALinkOutOfTheBlockManagerNeverServesItsBytes() throws Exception {
    Path outsideSub = Files.createDirectories(outside.resolve("02"));
    List<Fetched> targets = new ArrayList<>();
    for (long m : mapsIn(0x02, MAPS_BEYOND_KEPT)) {
      MapOutput good = MapOutput.random(m, lengths(m));
      MapOutput marker = MapOutput.marker(lengths(m));
      good.write(layout, m);
      marker.writeAs(outsideSub, m);
      targets.add(new Fetched(m, List.of(good), Map.of("bytes from outside the block manager's directory", marker)));
    }
    Path sub = blockManager.resolve("02");
    Path copy = Files.createDirectories(blockManager.resolve("02.copy"));
    try (Stream<Path> files = Files.list(sub)) {
      for (Path f : files.toList()) {
        Files.copy(f, copy.resolve(f.getFileName()));
      }
    }
    Path link = Files.createSymbolicLink(blockManager.resolve("02.link"), outsideSub);
    try (BlockServer server = start(); Storm storm = new Storm(server, false, false)) {
      try (RenameLoop loop = new RenameLoop(sub, List.of(blockManager.resolve("02.own"), link, copy, link))) {
        storm.run(targets, List.of(), loop::rounds);
      }
      storm.assertRaced("sub-directory 02 swapped for a link out", 100);
      assertServesCleanly(server, targets);
      assertNothingHeldOnceIdle(server);
    }
  }

  /**
   * Attack 2, links: a map output's data file, and another's index, each swapped for a symlink to
   * an outside file of its name (marker bytes of the same length; an index of other offsets), by
   * renames over the name that alternate the link with copies of the real file, so that the name
   * holds a new file each time and the server opens it afresh rather than use the one it keeps
   * (the open is where a link swapped in after the check would be followed).
   */
  @Test
  void aDataOrIndexFileSwappedForALinkOutOfTheBlockManagerNeverServesItsBytes() throws Exception {
    long dataMap = 101;
    long indexMap = 102;
    MapOutput data = MapOutput.random(dataMap, lengths(dataMap));
    MapOutput index = MapOutput.random(indexMap, lengths(indexMap));
    data.write(layout, dataMap);
    index.write(layout, indexMap);
    MapOutput marker = MapOutput.marker(lengths(dataMap));
    marker.writeAs(outside, dataMap);
    // The index's own bytes cut at other offsets: what its data would give through the outside index.
    MapOutput cutElsewhere = new MapOutput(slices(index.concatenated(), reversed(lengths(indexMap))));
    cutElsewhere.writeAs(outside, indexMap);
    Path dataFile = layout.data(SHUFFLE, dataMap);
    Path indexFile = layout.index(SHUFFLE, indexMap);
    List<Fetched> targets = List.of(
        new Fetched(dataMap, List.of(data), Map.of("the outside data file's bytes", marker)),
        new Fetched(indexMap, List.of(index), Map.of("the data cut by the outside index", cutElsewhere)));
    try (BlockServer server = start(); Storm storm = new Storm(server, false, false)) {
      try (RenameOverLoop dataLoop = linkAndCopies(dataFile, linkBeside(dataFile, outside.resolve(dataFile.getFileName())));
          RenameOverLoop indexLoop = linkAndCopies(indexFile, linkBeside(indexFile, outside.resolve(indexFile.getFileName())))) {
        storm.run(targets, List.of(), () -> Math.min(dataLoop.rounds(), indexLoop.rounds()));
      }
      storm.assertRaced("data and index files swapped for links out", 100);
      assertServesCleanly(server, targets);
      assertNothingHeldOnceIdle(server);
    }
  }

  /**
   * Attack 2, renames: another map output's data file (the same length, other bytes) renamed over
   * a map output's data file and its own back, over and over; the same with an index of other
   * offsets over another map output's index. The server cannot tell such a file from the map
   * output's own when its length fits the index; Spark's partition checksums, which the answer
   * carries, can: the reducer refuses the block. The other file's bytes are never taken as good.
   */
  @Test
  void anotherMapOutputsFileRenamedOverOnesFileIsNeverTakenForItsBlock() throws Exception {
    long dataMap = 201;
    long indexMap = 202;
    MapOutput data = MapOutput.random(dataMap, lengths(dataMap));
    MapOutput index = MapOutput.random(indexMap, lengths(indexMap));
    data.writeWithChecksums(layout, dataMap);
    index.writeWithChecksums(layout, indexMap);
    Path dataFile = layout.data(SHUFFLE, dataMap);
    Path indexFile = layout.index(SHUFFLE, indexMap);
    MapOutput otherData = MapOutput.random(9_201, lengths(dataMap));
    otherData.writeAs(outside, 9_201);
    // The same partitions empty (nothing to check in an empty one), the others cut elsewhere.
    int[] shifted = lengths(indexMap);
    shifted[0] += 5;
    shifted[1] -= 5;
    MapOutput cutElsewhere = new MapOutput(slices(index.concatenated(), shifted));
    cutElsewhere.writeAs(outside, 9_202);
    Path dataDonor = Files.move(outside.resolve(dataFile.getFileName().toString().replace("_201_", "_9201_")),
        dataFile.resolveSibling("data.donor"));
    Path indexDonor = Files.move(outside.resolve(indexFile.getFileName().toString().replace("_202_", "_9202_")),
        indexFile.resolveSibling("index.donor"));
    Path dataOwn = Files.createLink(dataFile.resolveSibling("data.own"), dataFile);
    Path indexOwn = Files.createLink(indexFile.resolveSibling("index.own"), indexFile);
    List<Fetched> targets = List.of(
        new Fetched(dataMap, List.of(data), Map.of("another map output's data", otherData)),
        new Fetched(indexMap, List.of(index), Map.of("the data cut by another index", cutElsewhere)));
    // The reducer retires a connection that brought a checksum mismatch, hundreds in a storm, and
    // closes each once its answers are in (ConnectionSlots.retire): the default connection limit holds.
    try (BlockServer server = start();
        Storm storm = new Storm(server, true, false)) {
      try (RenameOverLoop dataLoop = new RenameOverLoop(dataFile, List.of(dataDonor, dataOwn));
          RenameOverLoop indexLoop = new RenameOverLoop(indexFile, List.of(indexDonor, indexOwn))) {
        storm.run(targets, List.of(), () -> Math.min(dataLoop.rounds(), indexLoop.rounds()));
      }
      storm.assertRaced("other map outputs' files renamed over", 100);
      assertTrue(storm.checksumRefusals.get() > 0, "the reducer's checksums caught a swapped file: " + storm);
      assertServesCleanly(server, targets);
      assertNothingHeldOnceIdle(server);
    }
  }

  /**
   * Attack 3: FIFOs, whose open for reading blocks until a writer comes. Sub-directory {@code 1e}
   * swapped for a FIFO; {@code 22} for a directory of FIFOs named as its map outputs' files; a
   * data file renamed over by a FIFO and by copies of itself (opened afresh each time, so that
   * opens meet the FIFO). Every fetch is answered within the deadline, a bystander's fetches of
   * other sub-directories are all served, and every racing connection serves a clean block after.
   */
  @Test
  void aFifoSwappedInForASubDirectoryOrADataFileNeverHoldsAConnection() throws Exception {
    List<Fetched> racing = new ArrayList<>();
    for (long m : mapsIn(0x1e, 4)) {
      racing.add(writeGood(m));
    }
    Path fifoDir = Files.createDirectories(blockManager.resolve("22.fifos"));
    for (long m : mapsIn(0x22, 4)) {
      racing.add(writeGood(m));
      mkfifo(fifoDir.resolve(layout.index(SHUFFLE, m).getFileName()));
      mkfifo(fifoDir.resolve(layout.data(SHUFFLE, m).getFileName()));
    }
    long fifoDataMap = 301;
    racing.add(writeGood(fifoDataMap));
    Path dataFifo = blockManager.resolve("data.fifo");
    Path dirFifo = blockManager.resolve("1e.fifo");
    mkfifo(dataFifo);
    mkfifo(dirFifo);
    // The bystander's map outputs: more files than are kept, so that its fetches open files too.
    List<Fetched> calm = new ArrayList<>();
    for (long m = 1_000; calm.size() < MAPS_BEYOND_KEPT; m++) {
      int[] subs = {subDirectory(layout.index(SHUFFLE, m)), subDirectory(layout.data(SHUFFLE, m))};
      if (Arrays.stream(subs).noneMatch(s -> s == 0x1e || s == 0x22)) {
        calm.add(writeGood(m));
      }
    }
    List<Fetched> racingAndSomeCalm = new ArrayList<>(racing);
    racingAndSomeCalm.addAll(calm.subList(0, 8));
    try (BlockServer server = start(); Storm storm = new Storm(server, false, true)) {
      try (RenameLoop dirLoop = new RenameLoop(blockManager.resolve("1e"), dirFifo, blockManager.resolve("1e.aside"));
          RenameLoop fifosLoop = new RenameLoop(blockManager.resolve("22"), fifoDir, blockManager.resolve("22.aside"));
          RenameOverLoop dataLoop = linkAndCopies(layout.data(SHUFFLE, fifoDataMap), dataFifo)) {
        storm.run(racingAndSomeCalm, calm,
            () -> Math.min(Math.min(dirLoop.rounds(), fifosLoop.rounds()), dataLoop.rounds()));
      } finally {
        // Opens still blocked on a FIFO (given up on, left behind): give them their writer.
        release(dataFifo);
        release(dirFifo);
        try (Stream<Path> fifos = Files.list(fifoDir)) {
          for (Path f : fifos.toList()) {
            release(f);
          }
        }
      }
      FileOpeners openers = server.context().shuffleDirectories().place("x").directory().openers();
      System.out.println("ShuffleDirectorySwapRaceTest FIFO: opens blocked on a FIFO and released: "
          + openers.released() + ", left behind: " + openers.leftBehind());
      storm.assertRaced("FIFOs swapped in", 100);
      assertEquals(storm.bystanderFetches.get(), storm.bystanderServed.get(), "every bystander fetch served: " + storm);
      ShuffleBlockId clean = calm.get(0).block(1);
      for (BlockClient c : storm.clients) {
        assertArrayEquals(calm.get(0).good().get(0).block(clean), fetch(c, clean), "a racing connection after the race");
      }
      assertServesCleanly(server, racing);
      storm.close();
      assertNothingHeldOnceIdle(server);
    }
  }

  /**
   * Attack 4, or Spark's own cleanup racing a fetch: sub-directory {@code 3e} removed with its map
   * outputs and made again, its map outputs written again as a map task run again writes them
   * (data, then index, each renamed into place), alternately of two contents of different
   * lengths, while the server keeps the directory and files it had open. A fetch gives one
   * content's block, whole, or a refusal; never a block cut from one content by the other's
   * index, never bytes of both.
   */
  @Test
  void aSubDirectoryRemovedAndMadeAgainWhileFetchedServesOneWholeVersion() throws Exception {
    List<Long> maps = mapsIn(0x3e, 12);
    List<List<MapOutput>> versions = List.of(new ArrayList<>(), new ArrayList<>());
    List<Fetched> targets = new ArrayList<>();
    for (long m : maps) {
      MapOutput first = MapOutput.random(m, lengths(m));
      MapOutput second = MapOutput.random(m + 77, lengths(m + 77));
      assertTrue(first.length() != second.length(), "an index of one fits no data of the other");
      versions.get(0).add(first);
      versions.get(1).add(second);
      targets.add(new Fetched(m, List.of(first, second), Map.of()));
      first.write(layout, m);
    }
    AtomicLong made = new AtomicLong();
    try (BlockServer server = start(); Storm storm = new Storm(server, false, false)) {
      try (AttackLoop loop = remaking(blockManager.resolve("3e"), () -> {
        List<MapOutput> version = versions.get((int) (made.incrementAndGet() % 2));
        for (int i = 0; i < maps.size(); i++) {
          version.get(i).write(layout, maps.get(i));
        }
      })) {
        storm.run(targets, List.of(), made::get);
      }
      storm.assertRaced("sub-directory 3e removed and made again", 20);
      List<Fetched> now = new ArrayList<>();
      for (int i = 0; i < maps.size(); i++) {
        now.add(new Fetched(maps.get(i), List.of(versions.get((int) (made.get() % 2)).get(i)), Map.of()));
      }
      assertServesCleanly(server, now);
      assertNothingHeldOnceIdle(server);
    }
  }

  private BlockServer start() {
    return start(BlockServer.builder());
  }

  private BlockServer start(BlockServerBuilder builder) {
    return builder.shuffleDirectories(List.of(blockManager), SUB_DIRECTORIES)
        .shuffleChecksums(ChecksumAlgorithm.ADLER32).secret(SECRET).port(0).build().start();
  }

  private Fetched writeGood(long map) throws IOException {
    MapOutput good = MapOutput.random(map, lengths(map));
    good.write(layout, map);
    return new Fetched(map, List.of(good), Map.of());
  }

  /**
   * A loop renaming over {@code name}: {@code entry} (a symlink or a FIFO), a copy of the file,
   * {@code entry}, another copy. The copies hold the file's bytes in new inodes, so that the
   * server opens each afresh rather than using the file it keeps open.
   */
  private static RenameOverLoop linkAndCopies(Path name, Path entry) throws IOException {
    Path copy1 = Files.copy(name, name.resolveSibling(name.getFileName() + ".copy1"));
    Path copy2 = Files.copy(name, name.resolveSibling(name.getFileName() + ".copy2"));
    return new RenameOverLoop(name, List.of(entry, copy1, entry, copy2));
  }

  /** A symlink beside {@code name} to {@code target}. */
  private static Path linkBeside(Path name, Path target) throws IOException {
    return Files.createSymbolicLink(name.resolveSibling(name.getFileName() + ".link"), target);
  }

  /** The first {@code n} map ids whose index and data Spark puts in sub-directory {@code sub}. */
  private static List<Long> mapsIn(int sub, int n) {
    List<Long> maps = new ArrayList<>();
    for (long m = 0; maps.size() < n && m < 10_000_000; m++) {
      if (placed("shuffle_" + SHUFFLE + "_" + m + "_0.index") == sub
          && placed("shuffle_" + SHUFFLE + "_" + m + "_0.data") == sub) {
        maps.add(m);
      }
    }
    assertEquals(n, maps.size(), "map ids placed in sub-directory " + Integer.toHexString(sub));
    return maps;
  }

  private static int placed(String name) {
    return ShuffleDirectories.nonNegativeHash(name) % SUB_DIRECTORIES;
  }

  private static int subDirectory(Path file) {
    return Integer.parseInt(file.getParent().getFileName().toString(), 16);
  }

  /** Partition lengths of a map output, some empty, from its id. */
  private static int[] lengths(long map) {
    Random r = new Random(map * 31 + 7);
    int[] lengths = new int[PARTITIONS];
    for (int i = 0; i < PARTITIONS; i++) {
      lengths[i] = i == 2 ? 0 : 40 + r.nextInt(400);
    }
    return lengths;
  }

  private static int[] reversed(int[] lengths) {
    int[] r = new int[lengths.length];
    for (int i = 0; i < lengths.length; i++) {
      r[i] = lengths[lengths.length - 1 - i];
    }
    return r;
  }

  private static byte[][] slices(byte[] all, int[] lengths) {
    byte[][] parts = new byte[lengths.length][];
    int at = 0;
    for (int i = 0; i < lengths.length; i++) {
      parts[i] = Arrays.copyOfRange(all, at, at + lengths[i]);
      at += lengths[i];
    }
    return parts;
  }

  /** The content of one map output: its partitions' bytes. */
  record MapOutput(byte[][] partitions) {
    static MapOutput random(long seed, int[] lengths) {
      Random r = new Random(seed);
      byte[][] parts = new byte[lengths.length][];
      for (int i = 0; i < lengths.length; i++) {
        parts[i] = new byte[lengths[i]];
        r.nextBytes(parts[i]);
      }
      return new MapOutput(parts);
    }

    /** Bytes no inside file holds: what a fetch that left the block manager's directory gets. */
    static MapOutput marker(int[] lengths) {
      byte[] text = "MARKER: bytes from outside the block manager's directories; never to be served! "
          .getBytes();
      byte[][] parts = new byte[lengths.length][];
      for (int i = 0; i < lengths.length; i++) {
        parts[i] = new byte[lengths[i]];
        for (int b = 0; b < lengths[i]; b++) {
          parts[i][b] = text[(b + i) % text.length];
        }
      }
      return new MapOutput(parts);
    }

    void write(SparkShuffleLayout layout, long map) throws IOException {
      layout.write(SHUFFLE, map, partitions);
    }

    void writeWithChecksums(SparkShuffleLayout layout, long map) throws IOException {
      layout.writeWithChecksums(SHUFFLE, map, "ADLER32", Adler32::new, partitions);
    }

    /** Writes this map output's index and data into {@code dir} under map {@code map}'s names. */
    void writeAs(Path dir, long map) throws IOException {
      SparkShuffleLayout flat = new SparkShuffleLayout(List.of(dir.resolve("flat")), 1);
      flat.write(SHUFFLE, map, partitions);
      for (Path f : List.of(flat.index(SHUFFLE, map), flat.data(SHUFFLE, map))) {
        Files.move(f, dir.resolve(f.getFileName()));
      }
    }

    long length() {
      return Arrays.stream(partitions).mapToLong(p -> p.length).sum();
    }

    byte[] concatenated() {
      return block(new ShuffleBlockId(SHUFFLE, 0, 0, partitions.length));
    }

    byte[] block(ShuffleBlockId id) {
      int n = 0;
      for (int r = id.startReduceId(); r < id.endReduceId(); r++) {
        n += partitions[r].length;
      }
      byte[] out = new byte[n];
      int at = 0;
      for (int r = id.startReduceId(); r < id.endReduceId(); r++) {
        System.arraycopy(partitions[r], 0, out, at, partitions[r].length);
        at += partitions[r].length;
      }
      return out;
    }
  }

  /**
   * A map output fetched in a storm: the contents a fetch of its blocks may give, whole, and
   * those it must never give, by what they would mean.
   */
  record Fetched(long map, List<MapOutput> good, Map<String, MapOutput> never) {
    /** The block of the {@code k}th fetch: each partition alone, and all of them as one range. */
    ShuffleBlockId block(int k) {
      int r = Math.floorMod(k, PARTITIONS + 1);
      return r == PARTITIONS ? new ShuffleBlockId(SHUFFLE, map, 0, PARTITIONS) : ShuffleBlockId.of(SHUFFLE, map, r);
    }
  }

  /** Fetches in parallel while swap loops run, and what they got. */
  final class Storm implements AutoCloseable {
    final BlockServer server;
    /** Whether the reducer's check of Spark's partition checksums may refuse a block. */
    final boolean checksumsMayRefuse;
    /** Whether FIFOs are swapped in: an open blocked on one may be given up on ({@link FileOpeners}). */
    final boolean fifos;
    final List<BlockClient> clients = new ArrayList<>();
    final AtomicLong fetches = new AtomicLong();
    final AtomicLong served = new AtomicLong();
    final AtomicLong checksumRefusals = new AtomicLong();
    final Map<ErrorCode, AtomicLong> refused = new ConcurrentHashMap<>();
    /** The first refusal of each code, to read in the test's output. */
    final Map<ErrorCode, String> refusalSeen = new ConcurrentHashMap<>();
    final AtomicLong escapes = new AtomicLong();
    final AtomicLong slowestNanos = new AtomicLong();
    final AtomicLong bystanderFetches = new AtomicLong();
    final AtomicLong bystanderServed = new AtomicLong();
    final AtomicLong outsideDescriptorsSeen = new AtomicLong();
    final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
    long swapsWhileFetching;

    Storm(BlockServer server, boolean checksumsMayRefuse, boolean fifos) {
      this.server = server;
      this.checksumsMayRefuse = checksumsMayRefuse;
      this.fifos = fifos;
    }

    /**
     * {@link #FETCHERS} connections fetch {@code targets}' blocks in turn for {@link #STORM}, and
     * one more {@code calm}'s, if any; {@code swaps} counts the loops' rounds (the fewest of
     * several loops), read as the fetches start and end.
     */
    void run(List<Fetched> targets, List<Fetched> calm, LongSupplier swaps)
        throws InterruptedException {
      ClientConfig config = ClientConfig.builder().secret(SECRET).streams(1).maxRetries(0)
          .requestTimeout(FETCH_DEADLINE.plusSeconds(2)).build();
      InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
      List<Thread> threads = new ArrayList<>();
      long deadline = System.nanoTime() + STORM.toNanos();
      for (int t = 0; t < FETCHERS; t++) {
        BlockClient c = BlockClient.connect(address, config);
        clients.add(c);
        int offset = t * 7;
        threads.add(new Thread(() -> {
          for (int k = offset; System.nanoTime() < deadline; k++) {
            Fetched f = targets.get(Math.floorMod(k, targets.size()));
            judge(f, f.block(k / targets.size()), c, false);
          }
        }, "test-fetcher-" + t));
      }
      if (!calm.isEmpty()) {
        BlockClient c = BlockClient.connect(address, config);
        clients.add(c);
        threads.add(new Thread(() -> {
          for (int k = 0; System.nanoTime() < deadline; k++) {
            Fetched f = calm.get(Math.floorMod(k, calm.size()));
            judge(f, f.block(k / calm.size()), c, true);
          }
        }, "test-bystander"));
      }
      Thread sampler = new Thread(() -> {
        while (System.nanoTime() < deadline) {
          outsideDescriptorsSeen.addAndGet(descriptorsUnder(outside).size());
          sleep(5);
        }
      }, "test-descriptor-sampler");
      threads.add(sampler);
      long swapsBefore = swaps.getAsLong();
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
      swapsWhileFetching = swaps.getAsLong() - swapsBefore;
    }

    private void judge(Fetched f, ShuffleBlockId id, BlockClient c, boolean bystander) {
      (bystander ? bystanderFetches : fetches).incrementAndGet();
      long start = System.nanoTime();
      byte[] got;
      try {
        got = fetchOrFail(c, id);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (bystander) {
          wrong.add("the bystander's " + id.name() + " was refused: " + cause);
        } else if (cause instanceof RemoteFileException r && r.getMessage().contains(id.name())
            && (REFUSALS.contains(r.code()) || fifos && r.code() == ErrorCode.IO_ERROR
                && r.getMessage().contains("did not end in"))) {
          refused.computeIfAbsent(r.code(), x -> new AtomicLong()).incrementAndGet();
          refusalSeen.putIfAbsent(r.code(), r.getMessage());
        } else if (checksumsMayRefuse && cause instanceof ChecksumMismatchException m
            && m.getMessage().contains(id.name())) {
          checksumRefusals.incrementAndGet();
        } else {
          wrong.add(id.name() + " failed unlike a refusal naming it: " + cause);
        }
        return;
      } catch (TimeoutException e) {
        wrong.add(id.name() + ": no answer in " + FETCH_DEADLINE);
        return;
      } finally {
        slowestNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
      }
      for (MapOutput good : f.good()) {
        if (Arrays.equals(good.block(id), got)) {
          (bystander ? bystanderServed : served).incrementAndGet();
          return;
        }
      }
      for (Map.Entry<String, MapOutput> never : f.never().entrySet()) {
        if (Arrays.equals(never.getValue().block(id), got)) {
          escapes.incrementAndGet();
          wrong.add(id.name() + " served " + never.getKey());
          return;
        }
      }
      wrong.add(id.name() + " served " + got.length + " bytes that are no version of it (a mix?)");
    }

    /** What a storm must show: nothing wrong, and that it raced, at least {@code minimumSwaps} rounds. */
    void assertRaced(String attack, long minimumSwaps) {
      String summary = attack + ": " + this;
      System.out.println("ShuffleDirectorySwapRaceTest " + summary);
      refusalSeen.forEach((code, message) -> System.out.println("  first " + code + ": " + message));
      assertEquals(0, escapes.get(), summary);
      assertTrue(wrong.isEmpty(), summary);
      assertEquals(0, outsideDescriptorsSeen.get(), "the server never opened a file outside: " + summary);
      assertTrue(slowestNanos.get() < FETCH_DEADLINE.toNanos(), summary);
      long refusedAll = checksumRefusals.get() + refused.values().stream().mapToLong(AtomicLong::get).sum();
      // Not vacuous: the loops swapped while fetches ran, fetches met the swapped names and were served.
      assertTrue(swapsWhileFetching >= minimumSwaps, "too few swaps while fetching: " + summary);
      assertTrue(refusedAll > 0, "no fetch met a swapped name: " + summary);
      assertTrue(served.get() > 0, "no fetch was served: " + summary);
    }

    @Override
    public void close() {
      clients.forEach(BlockClient::close);
    }

    @Override
    public String toString() {
      return fetches + " fetches (" + served + " served, refused " + refused + ", " + checksumRefusals
          + " by the reducer's checksums), " + swapsWhileFetching + " swap rounds while fetching, slowest "
          + TimeUnit.NANOSECONDS.toMillis(slowestNanos.get()) + " ms; bystander " + bystanderServed + " of "
          + bystanderFetches + " served; outside descriptors seen " + outsideDescriptorsSeen + "; "
          + escapes + " escapes; wrong: " + wrong.stream().limit(5).toList();
    }
  }

  private static byte[] fetchOrFail(BlockClient c, ShuffleBlockId id)
      throws ExecutionException, TimeoutException {
    AtomicReference<ByteBuffer> dst = new AtomicReference<>();
    try {
      c.readShuffleBlock(id, a -> {
        ByteBuffer b = ByteBuffer.allocate(a.length());
        dst.set(b);
        return b;
      }).get(FETCH_DEADLINE.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return dst.get() == null ? new byte[0] : dst.get().array();
  }

  private static byte[] fetch(BlockClient c, ShuffleBlockId id) {
    try {
      return fetchOrFail(c, id);
    } catch (ExecutionException | TimeoutException e) {
      throw new AssertionError("fetching " + id.name() + " failed", e);
    }
  }

  /** A new connection fetches every block of {@code targets} as written. */
  private void assertServesCleanly(BlockServer server, List<Fetched> targets) {
    try (BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().secret(SECRET).maxRetries(0).build())) {
      for (Fetched f : targets) {
        for (int k = 0; k <= PARTITIONS; k++) {
          ShuffleBlockId id = f.block(k);
          assertArrayEquals(f.good().get(0).block(id), fetch(c, id), id.name() + " after the race");
        }
      }
    }
  }

  /**
   * Once idle, the server holds no map output's file (every lease given back, every kept file
   * closed by the idle sweep) and at most {@link SharedDirectories#MAX_HELD} sub-directories.
   */
  private void assertNothingHeldOnceIdle(BlockServer server) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> files = mapOutputDescriptors();
    while (!files.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(100);
      files = mapOutputDescriptors();
    }
    assertEquals(List.of(), files, "map output files still open once idle");
    SharedDirectories kept = server.context().shuffleDirectories().place("x").subDirectories();
    List<String> directories = descriptorsUnder(blockManager);
    System.out.println("ShuffleDirectorySwapRaceTest: once idle, " + kept.held() + " sub-directories held ("
        + kept.keptCount() + " kept), " + directories.size() + " descriptors in the block manager's directory");
    assertTrue(kept.held() <= SharedDirectories.MAX_HELD, "held " + kept.held());
    // Two descriptors per directory stream (its own and its reader's), and the root's.
    assertTrue(directories.size() <= 2 * (kept.held() + 1), directories.size() + " descriptors: "
        + directories.stream().limit(10).toList());
  }

  private List<String> mapOutputDescriptors() {
    return descriptorsUnder(blockManager).stream().filter(p -> p.contains("/shuffle_")).toList();
  }

  /** What this process's descriptors name below {@code dir} (the server runs in this JVM). */
  private static List<String> descriptorsUnder(Path dir) {
    List<String> found = new ArrayList<>();
    String prefix = dir.toString();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith(prefix)) {
            found.add(target);
          }
        } catch (IOException closedMeanwhile) {
          // gone: not held
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  /**
   * Spark's cleanup and a map task run again, in a loop: the sub-directory's files deleted and
   * the directory removed, then made again and {@code rewrite} run.
   */
  private static AttackLoop remaking(Path sub, AttackLoop.Round rewrite) {
    return new AttackLoop("remove-and-remake-loop", () -> {
      try (Stream<Path> files = Files.list(sub)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(sub);
      Files.createDirectory(sub);
      rewrite.run();
    });
  }

  private static void mkfifo(Path p) throws Exception {
    assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).start().waitFor());
  }

  /** Opens a FIFO read-write and closes it: any open blocked on it returns. */
  private static void release(Path fifo) throws IOException {
    try (var ch = Files.newByteChannel(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      // opened: that is all it takes
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
