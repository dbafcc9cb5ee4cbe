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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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

  /** Also when the writer puts the exact modification time back: the change time moved. */
  @ParameterizedTest
  @EnumSource(value = FileChanges.class, names = {"OVERWRITTEN", "OVERWRITTEN_MTIME_PUT_BACK"})
  void aWriteWhileSendfileRunsVoidsThePayloadAndTheErrorNamesTheFile(FileChanges change)
      throws IOException {
    Path file = root.resolve("live-" + change + ".bin");
    FileChanges.writeSettled(file, SIZE, 3);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      String name = file.getFileName().toString();
      peer.send(new StatRequest(1, name));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, name, version, 0, SIZE));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      // The header is out, so the check before the read has passed; the payload cannot all be
      // sent until this peer reads it, so the server is still in sendfile now.
      change.apply(file, 4);
      peer.payload(SIZE);
      assertEquals(ReadData.PAYLOAD_VOID, peer.trailerStatus());
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(2, refused.requestId());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
      assertTrue(refused.message().contains("'" + name + "'") && refused.message().contains(version.describe())
          && refused.message().contains("while it was being read"), refused.message());

      // The connection carries on: the new version reads, its trailer good.
      peer.send(new StatRequest(3, name));
      FileVersion now = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(4, name, now, 0, 1 << 20));
      assertEquals(4, ((ReadData) peer.receive()).requestId());
      peer.payload(1 << 20);
      assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());
    }
  }

  /**
   * The descriptor kept reading the old inode, so the bytes are all of one version; but the
   * old inode's change time moved when its last link went, which the server cannot tell from
   * a write whose writer put the modification time back: the payload is voided too.
   */
  @Test
  void aRenameOverWhileSendfileRunsSendsTheOldBytesVoidedAndTheNextReadIsRefused() throws IOException {
    Path file = root.resolve("swapped.bin");
    byte[] old = FileChanges.writeSettled(file, SIZE, 5);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, "swapped.bin"));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, "swapped.bin", version, 0, SIZE));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      FileChanges.awaitChangeTimeAfter(file);
      FileChanges.RENAMED_OVER.apply(file, 6);
      assertArrayEquals(old, peer.payload(SIZE));
      assertEquals(ReadData.PAYLOAD_VOID, peer.trailerStatus());
      ErrorResponse voided = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(ErrorCode.FILE_CHANGED, voided.code(), voided.message());

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
   * still be refused, never served from the kept descriptor; also when its writer put the
   * modification time back.
   */
  @ParameterizedTest
  @EnumSource(value = FileChanges.class, names = {"OVERWRITTEN", "OVERWRITTEN_MTIME_PUT_BACK"})
  void aSmallReadOfAFileRewrittenInPlaceSinceTheLastIsRefused(FileChanges change) throws IOException {
    Path file = root.resolve("small-" + change + ".bin");
    String name = file.getFileName().toString();
    byte[] old = FileChanges.writeSettled(file, 1 << 20, 9);
    try (RawPeer peer = new RawPeer(server.port(), 64 * 1024)) {
      peer.handshake();
      peer.send(new StatRequest(1, name));
      FileVersion version = ((StatResponse) peer.receive()).entry().version();
      peer.send(new ReadRequest(2, name, version, 4096, 4096));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      assertArrayEquals(java.util.Arrays.copyOfRange(old, 4096, 8192), peer.payload(4096));
      assertEquals(ReadData.PAYLOAD_GOOD, peer.trailerStatus());

      change.apply(file, 10);
      peer.send(new ReadRequest(3, name, version, 4096, 4096));
      ErrorResponse refused = assertInstanceOf(ErrorResponse.class, peer.receive());
      assertEquals(3, refused.requestId());
      assertEquals(ErrorCode.FILE_CHANGED, refused.code(), refused.message());
    }
  }
}
