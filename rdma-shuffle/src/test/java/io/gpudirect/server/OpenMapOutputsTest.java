package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.ShuffleDirectories.Placed;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Map outputs' files kept open between requests: one channel for many requests while the name
 * holds the same file, a file renamed over it opened afresh (as a map task run again writes
 * its outputs), a channel closed only once no request holds it, files unused closed, and a
 * bound on how many are kept.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OpenMapOutputsTest {
  @TempDir Path tmp;
  Path dir;
  RootDirectory root;
  SharedDirectories subDirectories;
  OpenMapOutputs files;

  @BeforeEach
  void open() throws IOException {
    dir = Files.createDirectories(tmp.resolve("blockmgr-test/0a")).getParent().toRealPath();
    root = new RootDirectory(dir);
    subDirectories = new SharedDirectories();
    files = new OpenMapOutputs();
  }

  @AfterEach
  void close() {
    files.close();
    subDirectories.close();
    root.close();
  }

  private Placed write(String name, String content) throws IOException {
    Path tmpFile = dir.resolve("0a/" + name + ".tmp");
    Files.writeString(tmpFile, content);
    Files.move(tmpFile, dir.resolve("0a/" + name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    return new Placed(root, RequestedPath.of("0a/" + name), subDirectories);
  }

  private static String read(OpenMapOutputs.Lease lease) throws IOException {
    ByteBuffer b = ByteBuffer.allocate((int) lease.file().size());
    lease.file().channel().read(b, 0);
    return new String(b.array(), java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void requestsShareOneChannelWhileTheNameHoldsTheSameFile() throws IOException {
    Placed data = write("shuffle_0_1_0.data", "first");
    try (OpenMapOutputs.Lease a = files.open(data); OpenMapOutputs.Lease b = files.open(data)) {
      assertSame(a.file().channel(), b.file().channel());
      assertEquals("first", read(b));
    }
    try (OpenMapOutputs.Lease c = files.open(data)) {
      assertTrue(c.file().channel().isOpen(), "kept open after its requests");
      assertEquals(1, files.size());
    }
  }

  @Test
  void aFileRenamedOverTheNameIsOpenedAfreshAndTheOldOneServesWhoHoldsIt() throws IOException {
    Placed data = write("shuffle_0_1_0.data", "first");
    try (OpenMapOutputs.Lease before = files.open(data)) {
      write("shuffle_0_1_0.data", "second run");
      try (OpenMapOutputs.Lease after = files.open(data)) {
        assertNotSame(before.file().channel(), after.file().channel());
        assertEquals("second run", read(after));
        assertEquals("first", read(before), "a request that holds the old file reads it to its end");
      }
      assertTrue(before.file().channel().isOpen());
      FileChannel old = before.file().channel();
      before.close();
      assertFalse(old.isOpen(), "the replaced file's channel is closed with its last lease");
    }
  }

  @Test
  void aChannelIsClosedWhenNeitherTheListNorARequestHoldsIt() throws IOException {
    Placed data = write("shuffle_0_1_0.data", "bytes");
    OpenMapOutputs.Lease held = files.open(data);
    FileChannel channel = held.file().channel();
    files.closeIdle(System.nanoTime() + TimeUnit.HOURS.toNanos(1), 0);
    assertEquals(0, files.size());
    assertTrue(channel.isOpen(), "closed under a request that holds it");
    assertEquals("bytes", read(held));
    held.close();
    assertFalse(channel.isOpen());
  }

  @Test
  void filesUsedLatelyStayAndAMissingOneIsRefused() throws IOException {
    Placed data = write("shuffle_0_1_0.data", "bytes");
    files.open(data).close();
    files.closeIdle(System.nanoTime(), TimeUnit.SECONDS.toNanos(60));
    assertEquals(1, files.size());
    Files.delete(dir.resolve("0a/shuffle_0_1_0.data"));
    RequestRefusedException e = assertThrows(RequestRefusedException.class, () -> files.open(data));
    assertEquals(io.gpudirect.protocol.ErrorCode.NOT_FOUND, e.code());
  }

  @Test
  void atMostMaxOpenAreKept() throws IOException {
    FileChannel first = null;
    for (int m = 0; m < OpenMapOutputs.MAX_OPEN + 10; m++) {
      try (OpenMapOutputs.Lease l = files.open(write("shuffle_0_" + m + "_0.data", "m" + m))) {
        if (first == null) {
          first = l.file().channel();
        }
        assertEquals("m" + m, read(l));
      }
    }
    assertEquals(OpenMapOutputs.MAX_OPEN, files.size());
    assertFalse(first.isOpen(), "the least recently used is closed first");
  }
}
