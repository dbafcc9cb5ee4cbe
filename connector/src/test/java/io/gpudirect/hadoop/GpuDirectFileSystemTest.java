package io.gpudirect.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileChangedException;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.FileChanges;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** GpuDirectFileSystem against a real BlockServer on loopback, found the way Hadoop finds it. */
class GpuDirectFileSystemTest {
  @TempDir
  static java.nio.file.Path root;

  private static BlockServer server;
  private static FileSystem fs;
  private static String base;
  private static byte[] big;

  @BeforeAll
  static void start() throws IOException {
    big = new byte[300_000];
    new Random(7).nextBytes(big);
    Files.write(root.resolve("big.bin"), big);
    Files.createDirectories(root.resolve("dir/sub"));
    Files.writeString(root.resolve("dir/a.csv"), "x\n1\n");
    Files.writeString(root.resolve("dir/b.csv"), "x\n2\n");
    Files.writeString(root.resolve("dir/c.json"), "{}\n");
    Files.writeString(root.resolve("dir/sub/d.csv"), "x\n3\n");
    server = BlockServer.builder().root(root).port(0).build().start();
    base = "gpudirect://127.0.0.1:" + server.port();
    // No fs.gpudirect.impl: the class must come from META-INF/services.
    fs = FileSystem.newInstance(URI.create(base + "/"), new Configuration());
  }

  @AfterAll
  static void stop() throws IOException {
    fs.close();
    RemoteStores.closeAll();
    server.close();
  }

  @Test
  void foundThroughServiceFileWithoutConfiguration() throws IOException {
    assertEquals(GpuDirectFileSystem.class, FileSystem.getFileSystemClass("gpudirect", new Configuration()));
    assertEquals(GpuDirectFileSystem.class, fs.getClass());
  }

  @Test
  void fileStatusOfFilesDirectoriesAndTheRoot() throws IOException {
    FileStatus file = fs.getFileStatus(new Path(base + "/big.bin"));
    assertTrue(file.isFile());
    assertEquals(big.length, file.getLen());
    assertEquals(new Path(base + "/big.bin"), file.getPath());
    assertTrue(fs.getFileStatus(new Path(base + "/dir")).isDirectory());
    assertTrue(fs.getFileStatus(new Path(base + "/")).isDirectory());
    // Relative paths resolve against the root.
    assertEquals(big.length, fs.getFileStatus(new Path("big.bin")).getLen());
    FileNotFoundException e = assertThrows(FileNotFoundException.class,
        () -> fs.getFileStatus(new Path(base + "/nope.csv")));
    assertTrue(e.getMessage().contains(base + "/nope.csv"), e.getMessage());
    assertFalse(fs.exists(new Path(base + "/nope.csv")));
  }

  @Test
  void listStatusGivesDirectChildrenWithDerivedDirectories() throws IOException {
    Map<String, Boolean> children = names(fs.listStatus(new Path(base + "/dir")));
    assertEquals(Map.of("a.csv", false, "b.csv", false, "c.json", false, "sub", true), children);
    assertEquals(Map.of("big.bin", false, "dir", true), names(fs.listStatus(new Path(base + "/"))));
    FileStatus[] one = fs.listStatus(new Path(base + "/dir/a.csv"));
    assertEquals(1, one.length);
    assertEquals(4, one[0].getLen());
    assertThrows(FileNotFoundException.class, () -> fs.listStatus(new Path(base + "/missing")));
  }

  @Test
  void globbing() throws IOException {
    assertEquals(Map.of("a.csv", false, "b.csv", false), names(fs.globStatus(new Path(base + "/dir/*.csv"))));
    assertEquals(Map.of("d.csv", false), names(fs.globStatus(new Path(base + "/dir/s*/*.csv"))));
    assertEquals(Map.of("c.json", false), names(fs.globStatus(new Path(base + "/*/c.{json,xml}"))));
    assertEquals(0, fs.globStatus(new Path(base + "/dir/*.parquet")).length);
  }

  @Test
  void blockLocationIsTheServerHost() throws IOException {
    FileStatus st = fs.getFileStatus(new Path(base + "/big.bin"));
    BlockLocation[] locations = fs.getFileBlockLocations(st, 0, st.getLen());
    assertEquals(1, locations.length);
    assertArrayEquals(new String[] {"127.0.0.1"}, locations[0].getHosts());
    assertEquals(big.length, locations[0].getLength());
  }

  @Test
  void sequentialReadsOfMixedSizesGiveTheFileBytes() throws IOException {
    byte[] out = new byte[big.length];
    Random r = new Random(3);
    try (FSDataInputStream in = fs.open(new Path(base + "/big.bin"))) {
      int at = 0;
      while (at < out.length) {
        int want = r.nextBoolean() ? 1 + r.nextInt(100) : 1 + r.nextInt(100_000);
        int len = Math.min(want, out.length - at);
        int n;
        if (r.nextBoolean()) {
          n = in.read(out, at, len);
        } else {
          ByteBuffer d = ByteBuffer.allocateDirect(len);
          n = in.read(d);
          d.flip().get(out, at, n);
        }
        assertTrue(n > 0, "read " + n + " at " + at);
        at += n;
      }
      assertEquals(-1, in.read());
    }
    assertArrayEquals(big, out);
  }

  @Test
  void positionedReadsFetchExactlyTheRangeAndKeepThePosition() throws IOException {
    try (FSDataInputStream in = fs.open(new Path(base + "/big.bin"))) {
      in.seek(10);
      long before = server.stats().bytesSent();
      byte[] b = new byte[100];
      in.readFully(200_000, b);
      assertArrayEquals(Arrays.copyOfRange(big, 200_000, 200_100), b);
      // Straight into the caller's array: no read-ahead fill, no other bytes fetched.
      assertEquals(100, bytesSentSince(before, 100));
      assertEquals(10, in.getPos());

      ByteBuffer d = ByteBuffer.allocateDirect(1000);
      before = server.stats().bytesSent();
      in.readFully(5000, d);
      assertEquals(1000, bytesSentSince(before, 1000));
      assertEquals(1000, d.position());
      byte[] got = new byte[1000];
      d.flip().get(got);
      assertArrayEquals(Arrays.copyOfRange(big, 5000, 6000), got);

      ByteBuffer tail = ByteBuffer.allocate(500);
      assertEquals(300, in.read(big.length - 300, tail));
      assertEquals(-1, in.read(big.length, ByteBuffer.allocate(1)));
      assertEquals(-1, in.read(big.length, new byte[1], 0, 1));
      assertThrows(EOFException.class, () -> in.readFully(big.length - 10, new byte[11]));
      assertThrows(EOFException.class, () -> in.readFully(big.length - 10, ByteBuffer.allocate(11)));
      assertThrows(EOFException.class, () -> in.read(-1, new byte[1], 0, 1));
      assertEquals(10, in.getPos());
      assertTrue(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
      assertTrue(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER));
    }
  }

  @Test
  void largeSequentialReadsSkipTheReadAheadAndSkipFetchesNothing() throws IOException {
    try (FSDataInputStream in = fs.open(new Path(base + "/big.bin"))) {
      long before = server.stats().bytesSent();
      assertEquals(1000, in.skip(1000));
      assertEquals(0, server.stats().bytesSent() - before);
      ByteBuffer dst = ByteBuffer.allocateDirect(RemoteInputStream.READ_AHEAD * 2);
      assertEquals(dst.capacity(), in.read(dst));
      assertEquals(dst.capacity(), bytesSentSince(before, dst.capacity()));
      byte[] got = new byte[dst.capacity()];
      dst.flip().get(got);
      assertArrayEquals(Arrays.copyOfRange(big, 1000, 1000 + got.length), got);
    }
  }

  @Test
  void openingMissingFilesAndDirectoriesFailsNamingThem() {
    FileNotFoundException missing = assertThrows(FileNotFoundException.class, () -> fs.open(new Path(base + "/x")));
    assertTrue(missing.getMessage().contains(base + "/x"), missing.getMessage());
    FileNotFoundException dir = assertThrows(FileNotFoundException.class, () -> fs.open(new Path(base + "/dir")));
    assertTrue(dir.getMessage().contains("directory"), dir.getMessage());
  }

  @Test
  void closedStreamRefusesReads() throws IOException {
    FSDataInputStream in = fs.open(new Path(base + "/big.bin"));
    in.close();
    assertThrows(IOException.class, () -> in.read(0, new byte[1], 0, 1));
    assertThrows(IOException.class, () -> in.read());
  }

  interface WriteOp {
    void run(Path p) throws IOException;
  }

  /** Every call that would change the server's files fails with an IOException naming the path. */
  @TestFactory
  Stream<DynamicTest> everyWriteIsRefusedNamingThePath() {
    Map<String, WriteOp> ops = new TreeMap<>();
    ops.put("create", p -> fs.create(p));
    ops.put("createNonRecursive", p -> fs.createNonRecursive(p, FsPermission.getFileDefault(),
        EnumSet.of(CreateFlag.CREATE), 4096, (short) 1, 1 << 20, null));
    ops.put("createFile", p -> fs.createFile(p).build());
    ops.put("append", p -> fs.append(p));
    ops.put("truncate", p -> fs.truncate(p, 0));
    ops.put("concat", p -> fs.concat(p, new Path[] {new Path(base + "/dir/b.csv")}));
    ops.put("rename", p -> fs.rename(p, new Path(base + "/renamed")));
    ops.put("delete", p -> fs.delete(p, false));
    ops.put("deleteOnExit", p -> fs.deleteOnExit(p));
    ops.put("mkdirs", p -> fs.mkdirs(p));
    ops.put("createSymlink", p -> fs.createSymlink(new Path(base + "/big.bin"), p, false));
    ops.put("setPermission", p -> fs.setPermission(p, FsPermission.getFileDefault()));
    ops.put("setOwner", p -> fs.setOwner(p, "u", "g"));
    ops.put("setTimes", p -> fs.setTimes(p, 1, 1));
    ops.put("setReplication", p -> fs.setReplication(p, (short) 2));
    ops.put("setXAttr", p -> fs.setXAttr(p, "user.a", new byte[1], EnumSet.of(XAttrSetFlag.CREATE)));
    ops.put("removeXAttr", p -> fs.removeXAttr(p, "user.a"));
    ops.put("setAcl", p -> fs.setAcl(p, List.of()));
    ops.put("modifyAclEntries", p -> fs.modifyAclEntries(p, List.of()));
    ops.put("removeAclEntries", p -> fs.removeAclEntries(p, List.of()));
    ops.put("removeDefaultAcl", p -> fs.removeDefaultAcl(p));
    ops.put("removeAcl", p -> fs.removeAcl(p));
    ops.put("createSnapshot", p -> fs.createSnapshot(p, "s"));
    ops.put("renameSnapshot", p -> fs.renameSnapshot(p, "s", "t"));
    ops.put("deleteSnapshot", p -> fs.deleteSnapshot(p, "s"));
    ops.put("setStoragePolicy", p -> fs.setStoragePolicy(p, "HOT"));
    ops.put("unsetStoragePolicy", p -> fs.unsetStoragePolicy(p));
    ops.put("copyFromLocalFile", p -> fs.copyFromLocalFile(new Path(root.resolve("big.bin").toUri()), p));
    return ops.entrySet().stream().map(op -> DynamicTest.dynamicTest(op.getKey(), () -> {
      Path target = new Path(base + "/dir/a.csv");
      IOException e = assertThrows(IOException.class, () -> op.getValue().run(target));
      assertTrue(e.getMessage().contains("read-only"), e.getMessage());
      assertTrue(e.getMessage().contains(base + "/dir/a.csv") || e.getMessage().contains(base + "/renamed"),
          e.getMessage());
      assertEquals("x\n1\n", Files.readString(root.resolve("dir/a.csv")));
    }));
  }

  /**
   * The server counts a read's bytes after its last byte (and checksum trailer) went out, so
   * the client may hold them a moment before the counter moves: wait up to 5 s for
   * {@code expected} bytes, then give what was counted (more shows as a mismatch too).
   */
  private static long bytesSentSince(long before, long expected) {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
    long sent = server.stats().bytesSent() - before;
    while (sent < expected && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      sent = server.stats().bytesSent() - before;
    }
    return sent;
  }

  private static Map<String, Boolean> names(FileStatus[] statuses) {
    Map<String, Boolean> m = new TreeMap<>();
    for (FileStatus s : statuses) {
      assertTrue(s.getPath().toString().startsWith(base + "/"), s.getPath().toString());
      m.put(s.getPath().getName(), s.isDirectory());
    }
    return m;
  }

  /**
   * A stream reads the version it opened: the file changed after the first megabyte was read
   * fails the next read, naming the file, whatever the change.
   */
  @ParameterizedTest
  @EnumSource(FileChanges.class)
  void aStreamFailsOnceItsFileChanges(FileChanges change, @TempDir java.nio.file.Path dir)
      throws IOException {
    java.nio.file.Path file = dir.resolve("changing.bin");
    byte[] before = FileChanges.writeSettled(file, 2 << 20, 11);
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start();
        FileSystem changing = FileSystem.newInstance(URI.create("gpudirect://127.0.0.1:" + own.port() + "/"),
            new Configuration());
        FSDataInputStream in = changing.open(new Path("gpudirect://127.0.0.1:" + own.port() + "/changing.bin"))) {
      byte[] first = new byte[1 << 20];
      in.readFully(first);
      assertArrayEquals(Arrays.copyOf(before, 1 << 20), first);

      change.apply(file, 12);

      IOException e = assertThrows(IOException.class, () -> in.readFully(new byte[1 << 20]));
      assertChanged(e, "changing.bin");
      // Small reads (through the stream's read-ahead) and positioned reads fail the same way.
      assertChanged(assertThrows(IOException.class, in::read), "changing.bin");
      assertChanged(assertThrows(IOException.class, () -> in.readFully(0, new byte[10])),
          "changing.bin");
    }
  }

  /**
   * A reader given the scan's listed version (in its conf) opens the file and asks for its
   * status without a round trip (the listing has both), and a file changed since the listing
   * fails at its first read, naming it and the version listed, before any byte is used; also
   * when only its change time tells (the version's token carries it to the reader).
   */
  @ParameterizedTest
  @EnumSource(value = FileChanges.class, names = {"RENAMED_OVER", "OVERWRITTEN_MTIME_PUT_BACK"})
  void aFileChangedSinceTheListingFailsItsFirstRead(FileChanges change, @TempDir java.nio.file.Path dir)
      throws IOException {
    java.nio.file.Path file = dir.resolve("listed.bin");
    byte[] bytes = FileChanges.writeSettled(file, 100_000, 13);
    try (BlockServer own = BlockServer.builder().root(dir).port(0).build().start()) {
      String at = "gpudirect://127.0.0.1:" + own.port();
      FileVersion listed;
      try (BlockClient client = BlockClient.connect(
          new java.net.InetSocketAddress("127.0.0.1", own.port()), ClientConfig.builder().build())) {
        listed = client.stat("listed.bin").version();
      }
      Configuration conf = new Configuration();
      conf.setBoolean("fs.gpudirect.impl.disable.cache", true);
      ExpectedVersion.set(conf, at + "/listed.bin", listed);
      try (FileSystem reader = FileSystem.newInstance(URI.create(at + "/"), conf)) {
        long requests = own.stats().requests();
        FileStatus status = reader.getFileStatus(new Path(at + "/listed.bin"));
        FSDataInputStream in = reader.open(new Path(at + "/listed.bin"));
        assertEquals(requests, own.stats().requests(), "no STAT: the listing gave the status");
        assertEquals(bytes.length, status.getLen());
        byte[] first = new byte[100];
        in.readFully(first);
        assertArrayEquals(Arrays.copyOf(bytes, 100), first);
        in.close();

        change.apply(file, 14);
        try (FSDataInputStream changed = reader.open(new Path(at + "/listed.bin"))) {
          IOException e = assertThrows(IOException.class, () -> changed.readFully(new byte[100]));
          assertChanged(e, "listed.bin");
          assertTrue(e.getMessage().contains(listed.describe()), e.getMessage());
        }
      }
    }
  }

  /**
   * Parquet reads a file's last 8 bytes (the footer's length), then the footer before them:
   * one round trip for both when the footer fits the stream's small-read window, which the
   * stream keeps while smaller reads elsewhere come and go.
   */
  @Test
  void theTailAndTheFooterBeforeItComeInOneRead() throws IOException {
    try (FSDataInputStream in = fs.open(new Path(base + "/big.bin"))) {
      long opened = server.stats().requests();
      byte[] tail = new byte[8];
      in.seek(big.length - 8);
      in.readFully(tail);
      byte[] footer = new byte[30_000];
      in.seek(big.length - 8 - footer.length);
      in.readFully(footer);
      assertArrayEquals(Arrays.copyOfRange(big, big.length - 8, big.length), tail);
      assertArrayEquals(Arrays.copyOfRange(big, big.length - 8 - footer.length, big.length - 8), footer);
      assertEquals(1, server.stats().requests() - opened, "one READ for the tail and the footer");

      // Parquet's dictionary filter then reads a dictionary page at a column chunk's start, and
      // the reader comes back for the page indexes before the footer: they are still here.
      byte[] page = new byte[5_000];
      in.seek(1_000);
      in.readFully(page);
      byte[] indexes = new byte[4_000];
      in.seek(big.length - 8 - footer.length - indexes.length);
      in.readFully(indexes);
      assertArrayEquals(Arrays.copyOfRange(big, 1_000, 6_000), page);
      assertArrayEquals(Arrays.copyOfRange(big, big.length - 8 - footer.length - indexes.length,
          big.length - 8 - footer.length), indexes);
      assertEquals(2, server.stats().requests() - opened, "one more READ, for the page, and none for the indexes");
    }
  }

  private static void assertChanged(IOException e, String name) {
    Throwable c = e;
    while (c != null && !(c instanceof FileChangedException)) {
      c = c.getCause();
    }
    assertTrue(c instanceof FileChangedException, () -> "not a FileChangedException: " + e);
    assertTrue(e.getMessage().contains(name) && e.getMessage().contains("changed"), e.getMessage());
  }
}
