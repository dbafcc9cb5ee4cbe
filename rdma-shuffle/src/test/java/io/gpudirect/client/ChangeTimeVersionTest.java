package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.FileVersion;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.FileChanges;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file's version includes its change time, which no user can set: a writer who rewrites a
 * range in place and puts the exact modification time back (attack 6 of issue 28) leaves the
 * file's identity, size and modification time as they were, and STAT and LIST still give
 * another version, which a READ of the old one is refused against.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChangeTimeVersionTest {
  @TempDir static Path root;
  static BlockServer server;
  static BlockClient client;

  @BeforeAll
  static void start() throws IOException {
    server = BlockServer.builder().root(root).port(0).build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().build());
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  @Test
  void aRewriteThatPutsTheModificationTimeBackIsAnotherVersionInStatAndList() throws IOException {
    Path dir = Files.createDirectories(root.resolve("rewritten"));
    Path file = dir.resolve("f.bin");
    FileChanges.writeSettled(file, 4 << 20, 1);
    FileVersion before = client.stat("rewritten/f.bin").version();
    assertEquals(before, listed("rewritten"), "STAT and LIST give one version");

    FileChanges.OVERWRITTEN_MTIME_PUT_BACK.apply(file, 2);

    FileVersion after = client.stat("rewritten/f.bin").version();
    assertEquals(before.fileId(), after.fileId(), "the same inode");
    assertEquals(before.size(), after.size());
    assertEquals(before.modifiedNanos(), after.modifiedNanos(), "the modification time put back");
    assertNotEquals(before, after, "the change time moved");
    assertEquals(after, listed("rewritten"));
    assertTrue(before.describe().contains("changed ") && !before.describe().equals(after.describe()),
        before.describe() + " / " + after.describe());
    FileChangedException e = assertThrows(FileChangedException.class,
        () -> client.read("rewritten/f.bin", before, 0, ByteBuffer.allocateDirect(4096)));
    assertTrue(e.getMessage().contains(before.describe()) && e.getMessage().contains(after.describe()),
        e.getMessage());
  }

  /**
   * The change time cannot tell a write from a change of the file's metadata: a chmod makes
   * another version too, and fails a read of the old one (docs/security.md says so).
   */
  @Test
  void aChmodIsAnotherVersionToo() throws IOException {
    Path dir = Files.createDirectories(root.resolve("chmod"));
    Path file = dir.resolve("f.bin");
    FileChanges.writeSettled(file, 1 << 20, 3);
    FileVersion before = client.stat("chmod/f.bin").version();
    FileChanges.awaitChangeTimeAfter(file);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r-----"));
    FileVersion after = client.stat("chmod/f.bin").version();
    assertEquals(before.size(), after.size());
    assertEquals(before.modifiedNanos(), after.modifiedNanos());
    assertNotEquals(before, after);
    assertEquals(after, listed("chmod"));
  }

  /** The version of the one file below {@code dir}, as LIST gives it. */
  private static FileVersion listed(String dir) {
    List<FileEntry> entries = client.list(dir);
    assertEquals(1, entries.size(), entries.toString());
    return entries.get(0).version();
  }
}
