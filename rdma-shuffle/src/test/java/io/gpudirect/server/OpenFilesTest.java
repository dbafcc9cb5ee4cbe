package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files a connection keeps open between requests: what it reads after the file changed on
 * disk, and that its descriptors are bounded and closed. Each test drives one connection by
 * hand, so that every request finds that connection's open files; both answer paths are read
 * (4 KiB: read into memory and sent in one write; 80,000 bytes: sendfile).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OpenFilesTest {
  @TempDir Path dir;
  Path root;
  BlockServer server;
  RawPeer peer;
  final AtomicLong ids = new AtomicLong();

  @BeforeEach
  void start() throws IOException {
    root = Files.createDirectories(dir.resolve("root")).toRealPath();
    server = BlockServer.builder().root(root).port(0).build().start();
    peer = new RawPeer(server.port());
    peer.handshake();
  }

  @AfterEach
  void stop() throws IOException {
    peer.close();
    server.close();
  }

  @Test
  void aFileReplacedByARenameIsReadAnew() throws IOException {
    byte[] first = TestFiles.write(root.resolve("f.bin"), 100_000, 1);
    assertReads("f.bin", 1000, 4096, first);
    assertReads("f.bin", 2000, 80_000, first);
    Path next = dir.resolve("next.bin");
    byte[] second = TestFiles.write(next, 100_000, 2);
    Files.move(next, root.resolve("f.bin"), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    assertReads("f.bin", 1000, 4096, second);
    assertReads("f.bin", 2000, 80_000, second);
  }

  @Test
  void aDeletedFileIsNotFoundAndItsDescriptorClosesWhenTheConnectionIsIdle() throws Exception {
    byte[] first = TestFiles.write(root.resolve("f.bin"), 100_000, 3);
    assertReads("f.bin", 0, 4096, first);
    Files.delete(root.resolve("f.bin"));
    assertRefused("f.bin", 0, 4096, ErrorCode.NOT_FOUND);
    assertEquals(1, descriptorsBelow(root), "the deleted file, still held for the connection");
    // Idle: the server's sweeper closes it, so the deleted file's blocks are not held on to.
    assertEquals(0, settledDescriptors(root, 0));
    byte[] again = TestFiles.write(root.resolve("f.bin"), 100_000, 4);
    assertReads("f.bin", 0, 4096, again);
  }

  @Test
  void aFileTruncatedInPlaceIsCheckedAgainstItsNewSize() throws IOException {
    byte[] bytes = TestFiles.write(root.resolve("f.bin"), 100_000, 5);
    assertReads("f.bin", 50_000, 4096, bytes);
    try (FileChannel fc = FileChannel.open(root.resolve("f.bin"), StandardOpenOption.WRITE)) {
      fc.truncate(10_000);
    }
    assertRefused("f.bin", 50_000, 4096, ErrorCode.OUT_OF_RANGE);
    assertRefused("f.bin", 0, 80_000, ErrorCode.OUT_OF_RANGE);
    assertReads("f.bin", 0, 4096, bytes);
  }

  @Test
  void aSymlinkSwappedInForAnOpenFileIsStillConfined() throws IOException {
    byte[] bytes = TestFiles.write(root.resolve("f.bin"), 10_000, 6);
    assertReads("f.bin", 0, 4096, bytes);
    Path outside = dir.resolve("outside.bin");
    TestFiles.write(outside, 10_000, 7);
    Files.delete(root.resolve("f.bin"));
    Files.createSymbolicLink(root.resolve("f.bin"), outside);
    assertRefused("f.bin", 0, 4096, ErrorCode.OUTSIDE_ROOT);
  }

  @Test
  void aConnectionHoldsAtMostEightFilesAndClosesThemWhenItEnds() throws Exception {
    long before = descriptorsBelow(root);
    for (int i = 0; i < 20; i++) {
      byte[] bytes = TestFiles.write(root.resolve("f" + i + ".bin"), 5000, 10 + i);
      assertReads("f" + i + ".bin", 100, 4096, bytes);
      assertTrue(descriptorsBelow(root) <= before + OpenFiles.MAX_OPEN,
          descriptorsBelow(root) + " descriptors open after " + (i + 1) + " files");
    }
    assertEquals(before + OpenFiles.MAX_OPEN, descriptorsBelow(root));
    peer.close();
    assertEquals(before, settledDescriptors(root, before));
  }

  @Test
  void aKeptDirectoryReplacedByARenameIsWalkedAnewAndAtMostEightAreKept() throws Exception {
    byte[] first = TestFiles.write(root.resolve("sub/f.bin"), 10_000, 30);
    assertReads("sub/f.bin", 0, 4096, first);
    // The connection keeps "sub" open; a new "sub" takes its name, the old one moves away.
    Files.move(root.resolve("sub"), dir.resolve("old-sub"), StandardCopyOption.ATOMIC_MOVE);
    byte[] second = TestFiles.write(root.resolve("sub/f.bin"), 10_000, 31);
    assertReads("sub/f.bin", 0, 4096, second);
    // Replaced by a symlink to the old one, now outside the root: refused, not read through.
    Files.move(root.resolve("sub"), root.resolve("sub2"), StandardCopyOption.ATOMIC_MOVE);
    Files.createSymbolicLink(root.resolve("sub"), dir.resolve("old-sub"));
    assertRefused("sub/f.bin", 0, 4096, ErrorCode.OUTSIDE_ROOT);

    long before = descriptorsBelow(root);
    for (int i = 0; i < 20; i++) {
      byte[] bytes = TestFiles.write(root.resolve("d" + i + "/f.bin"), 5000, 40 + i);
      assertReads("d" + i + "/f.bin", 100, 4096, bytes);
    }
    // Each read keeps its directory (Java holds two descriptors for an open directory stream)
    // and its file; the least recently used go first.
    assertTrue(descriptorsBelow(root) <= OpenFiles.MAX_OPEN + 2 * OpenFiles.MAX_DIRECTORIES,
        descriptorsBelow(root) + " descriptors open, " + before + " before");
    peer.close();
    assertEquals(0, settledDescriptors(root, 0));
  }

  private void assertReads(String path, long offset, int length, byte[] file) throws IOException {
    long id = ids.incrementAndGet();
    peer.send(new ReadRequest(id, path, offset, length));
    ReadData d = assertInstanceOf(ReadData.class, peer.receive());
    assertEquals(id, d.requestId());
    byte[] payload = peer.payload(length);
    assertArrayEquals(Arrays.copyOfRange(file, (int) offset, (int) offset + length), payload);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(payload);
    assertEquals((int) crc.getValue(), peer.checksumTrailer());
  }

  private void assertRefused(String path, long offset, int length, ErrorCode code)
      throws IOException {
    long id = ids.incrementAndGet();
    peer.send(new ReadRequest(id, path, offset, length));
    ErrorResponse e = assertInstanceOf(ErrorResponse.class, peer.receive());
    assertEquals(id, e.requestId());
    assertEquals(code, e.code(), e.message());
  }

  /** This JVM's descriptors open on files below {@code dir} (deleted ones included). */
  static long descriptorsBelow(Path dir) throws IOException {
    long n = 0;
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          if (Files.readSymbolicLink(fd).toString().startsWith(dir.toString() + "/")) {
            n++;
          }
        } catch (IOException gone) {
          // closed while listing (the directory stream's own descriptor, for one)
        }
      }
    }
    return n;
  }

  private static long settledDescriptors(Path dir, long expected) throws Exception {
    return Settle.count(() -> {
      try {
        return descriptorsBelow(dir);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, expected);
  }
}
