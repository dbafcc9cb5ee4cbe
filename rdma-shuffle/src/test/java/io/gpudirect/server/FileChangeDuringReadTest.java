package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.testing.FileChanges;
import io.gpudirect.testing.RawPeer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file written while the server sends it with sendfile: the check before the READ passed,
 * so only the check after the payload can keep the client from taking bytes of two versions.
 * A file renamed over meanwhile is another matter: the open descriptor reads the old inode.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FileChangeDuringReadTest {
  /** Far more than a loopback send buffer (4 MiB at most here) and the peer's 64 KiB hold. */
  static final int SIZE = Protocol.DEFAULT_MAX_READ_LENGTH;

  @TempDir static Path root;
  static BlockServer server;

  @BeforeAll
  static void start() throws IOException {
    server = BlockServer.builder().root(root).port(0).build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void aWriteWhileSendfileRunsVoidsThePayloadAndTheErrorNamesTheFile() throws IOException {
    Path file = root.resolve("live.bin");
    FileChanges.writeSettled(file, SIZE, 3);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, "live.bin"));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, "live.bin", version, 0, SIZE));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      // The header is out, so the check before the read has passed; the payload cannot all be
      // sent until this peer reads it, so the server is still in sendfile now.
      FileChanges.OVERWRITTEN.apply(file, 4);
      peer.payload(SIZE);
      assertEquals(ReadData.PAYLOAD_VOID, peer.trailerStatus());
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(2, refused.requestId());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
      assertTrue(refused.message().contains("'live.bin'") && refused.message().contains(version.describe())
          && refused.message().contains("while it was being read"), refused.message());

      // The connection carries on: the new version reads, its trailer good.
      peer.send(new StatRequest(3, "live.bin"));
      FileVersion now = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(4, "live.bin", now, 0, 1 << 20));
      assertEquals(4, ((ReadData) peer.receive()).requestId());
      peer.payload(1 << 20);
      assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());
    }
  }

  @Test
  void aRenameOverWhileSendfileRunsSendsTheOldBytesAndTheNextReadIsRefused() throws IOException {
    Path file = root.resolve("swapped.bin");
    byte[] old = FileChanges.writeSettled(file, SIZE, 5);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, "swapped.bin"));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, "swapped.bin", version, 0, SIZE));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      FileChanges.RENAMED_OVER.apply(file, 6);
      // The descriptor kept reading the old inode: one version, the one named, throughout.
      assertArrayEquals(old, peer.payload(SIZE));
      assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());

      peer.send(new ReadRequest(3, "swapped.bin", version, 0, 4096));
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(3, refused.requestId());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
    }
  }

  /**
   * Written in place and then renamed away while sendfile runs: the bytes sent may mix versions,
   * and the name no longer leads to the file read, so only {@code fstat} of the open descriptor
   * sees the write (a second walk of the path found no file there and could check its size only).
   */
  @Test
  void aWriteInPlaceThenARenameAwayWhileSendfileRunsVoidsThePayload() throws IOException {
    assertTrue(DescriptorAttributes.available(), "the build's --add-opens give the server fstat");
    Path file = root.resolve("moved.bin");
    FileChanges.writeSettled(file, SIZE, 7);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, "moved.bin"));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, "moved.bin", version, 0, SIZE));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      FileChanges.OVERWRITTEN.apply(file, 8);
      Files.move(file, root.resolve("moved-away.bin"), StandardCopyOption.ATOMIC_MOVE);
      peer.payload(SIZE);
      assertEquals(ReadData.PAYLOAD_VOID, peer.trailerStatus());
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
    }
  }

  /**
   * Small reads from the file the connection keeps open are read first and checked after
   * (ReadAnswers): a file rewritten in place since the last one (same inode, kept open) must
   * still be refused, never served from the kept descriptor.
   */
  @Test
  void aSmallReadOfAFileRewrittenInPlaceSinceTheLastIsRefused() throws IOException {
    Path file = root.resolve("small.bin");
    byte[] old = FileChanges.writeSettled(file, 1 << 20, 9);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, "small.bin"));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, "small.bin", version, 4096, 4096));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      assertArrayEquals(java.util.Arrays.copyOfRange(old, 4096, 8192), peer.payload(4096));
      assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());

      FileChanges.OVERWRITTEN.apply(file, 10);
      peer.send(new ReadRequest(3, "small.bin", version, 4096, 4096));
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(3, refused.requestId());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
    }
  }
}
