package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.RemoteFileException;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.MessageType;
import io.gpudirect.testing.FrameChecksums;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.TestFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Path confinement beyond plain {@code ..}: percent-encoded and double-encoded separators,
 * Unicode look-alikes, overlong UTF-8 and NUL bytes on the wire, FIFOs and device files. Next
 * to the root lies a file {@code secret.txt}; no request below may read it, and none may hang.
 * The server decodes no percent-escapes: a path is UTF-8 bytes, and {@code %2e} is three
 * characters of a file name (clients decode URIs before they send a path).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PathTricksTest {
  @TempDir static Path outside;
  static Path root;
  static BlockServer server;
  static BlockClient client;
  static byte[] small;

  @BeforeAll
  static void start() throws Exception {
    root = Files.createDirectories(outside.resolve("root"));
    Files.writeString(outside.resolve("secret.txt"), "top secret");
    small = TestFiles.write(root.resolve("data/small.bin"), 100, 1);
    Process p = new ProcessBuilder("mkfifo", root.resolve("data/pipe").toString()).start();
    assertEquals(0, p.waitFor());
    Files.createSymbolicLink(root.resolve("data/zero"), Path.of("/dev/zero"));
    Files.createSymbolicLink(root.resolve("data/null"), Path.of("/dev/null"));
    server = BlockServer.builder().root(root).port(0).build().start();
    client = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().streams(1).maxRetries(0).build());
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  @Test
  void encodedSeparatorsAndDotsAreNamesNotPaths() {
    for (String p : List.of("%2e%2e/secret.txt", "%2E%2E/secret.txt", "..%2fsecret.txt",
        "..%2Fsecret.txt", "%2e%2e%2fsecret.txt", "%252e%252e%252fsecret.txt",
        "data/%2e%2e/%2e%2e/secret.txt", "..%5csecret.txt", "..\\secret.txt", "%c0%ae%c0%ae/secret.txt")) {
      expect(p, ErrorCode.NOT_FOUND, "No such file");
    }
    // Decoded, as a client decodes a URI, the same paths are refused for what they are.
    expect("../secret.txt", ErrorCode.OUTSIDE_ROOT, "climbs above");
    expect("data/../../secret.txt", ErrorCode.OUTSIDE_ROOT, "climbs above");
  }

  @Test
  void unicodeLookAlikesAreOrdinaryNames() {
    for (String p : List.of("\uff0e\uff0e/secret.txt", "\u2024\u2024/secret.txt", "\u2025/secret.txt",
        "..\u2215secret.txt", "..\u2044secret.txt", "\uff0e\uff0e\uff0fsecret.txt", "\u002e\u0307\u002e/secret.txt")) {
      expect(p, ErrorCode.NOT_FOUND, "No such file");
    }
  }

  @Test
  void nulBytesAreRefusedWherever() {
    for (String p : List.of("data/small.bin\0.txt", "\0", "data\0/../../secret.txt", "../secret.txt\0")) {
      expect(p, ErrorCode.BAD_REQUEST, "NUL");
    }
    assertReadsSmall();
  }

  @Test
  void overlongAndInvalidUtf8OnTheWireIsAProtocolError() throws IOException {
    byte[][] paths = {
        {(byte) 0xc0, (byte) 0xae, (byte) 0xc0, (byte) 0xae, '/', 's'},          // overlong "."
        {'.', '.', (byte) 0xc0, (byte) 0xaf, 's'},                                // overlong "/"
        {(byte) 0xe0, (byte) 0x80, (byte) 0xae, (byte) 0xe0, (byte) 0x80, (byte) 0xae, '/'},
        {(byte) 0xc0, (byte) 0x80},                                                // overlong NUL
        {(byte) 0xed, (byte) 0xa0, (byte) 0x80},                                   // lone surrogate
        {(byte) 0xff, '.', '.'},
    };
    for (byte[] path : paths) {
      try (RawPeer peer = new RawPeer(server.port())) {
        peer.handshake();
        peer.sendRaw(readFrame(7, path));
        ErrorResponse e = assertInstanceOf(ErrorResponse.class, peer.receive());
        assertEquals(ErrorCode.BAD_REQUEST, e.code());
        assertTrue(e.message().contains("READ path is not valid UTF-8"), e.message());
        // The server closes a connection whose stream it can no longer trust.
        assertEquals(-1, peer.channel.socket().getInputStream().read());
      }
    }
    assertReadsSmall();
  }

  @Test
  void fifosAndDevicesAreRefusedWithoutHanging() {
    // A FIFO has no writer: opening it would block forever. It is never opened.
    expect("data/pipe", ErrorCode.NOT_A_FILE, "not a regular file");
    RemoteFileException stat = assertThrows(RemoteFileException.class, () -> client.stat("data/pipe"));
    assertEquals(ErrorCode.NOT_A_FILE, stat.code());
    // Device files reached through a symlink lie outside the root.
    expect("data/zero", ErrorCode.OUTSIDE_ROOT, "resolves outside");
    expect("data/null", ErrorCode.OUTSIDE_ROOT, "resolves outside");
    // Listings show neither.
    assertEquals(List.of("data/small.bin"), client.list("data").stream().map(FileEntry::path).toList());
  }

  @Test
  void aDeviceNodeInsideTheRootIsNotAFile() throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self")), "Linux only");
    Path node = root.resolve("data/zero-node");
    Process p = new ProcessBuilder("mknod", node.toString(), "c", "1", "5").redirectErrorStream(true).start();
    // mknod needs CAP_MKNOD (root, outside most containers' limits); skip where it is refused.
    assumeTrue(p.waitFor() == 0, "mknod not permitted here");
    try {
      expect("data/zero-node", ErrorCode.NOT_A_FILE, "not a regular file");
    } finally {
      Files.delete(node);
    }
  }

  private static void assertReadsSmall() {
    ByteBuffer dst = ByteBuffer.allocate(100);
    client.read("data/small.bin", 0, dst);
    assertArrayEquals(small, dst.array());
  }

  private static void expect(String path, ErrorCode code, String words) {
    RemoteFileException e = assertThrows(RemoteFileException.class,
        () -> client.read(path, 0, ByteBuffer.allocate(4)), RootDirectory.show(path));
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(words), e.getMessage());
    assertTrue(!e.getMessage().contains("top secret"));
  }

  /** A READ frame with {@code path} as raw bytes, as no Java string would encode it. */
  static byte[] readFrame(long requestId, byte[] path) {
    ByteBuffer b = ByteBuffer.allocate(4 + 1 + 8 + 4 + path.length + 8 + 4 + Frames.CHECKSUM_BYTES);
    b.putInt(1 + 8 + 4 + path.length + 8 + 4 + Frames.CHECKSUM_BYTES).put(MessageType.READ.id())
        .putLong(requestId).putInt(path.length).put(path).putLong(0).putInt(4);
    FrameChecksums.reseal(b.array());
    return b.array();
  }
}
