package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.MessageType;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.protocol.StatResponse;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.Settle;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.AuthenticationException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BlockServerTest {
  static final byte[] SECRET = "correct horse battery staple".getBytes(StandardCharsets.UTF_8);

  @TempDir static Path root;
  static BlockServer open;
  static BlockServer guarded;
  static byte[] data;

  @BeforeAll
  static void start() throws IOException {
    data = TestFiles.write(root.resolve("f.bin"), 200_000, 5);
    open = BlockServer.builder().root(root).port(0).maxReadLength(100_000).build().start();
    guarded = BlockServer.builder().root(root).port(0).secret(SECRET).build().start();
  }

  @AfterAll
  static void stop() {
    open.close();
    guarded.close();
  }

  static InetSocketAddress address(BlockServer s) {
    return new InetSocketAddress("127.0.0.1", s.port());
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrderWithCrc() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      HelloAck ack = peer.handshake();
      assertEquals(100_000, ack.maxReadLength());
      assertTrue((ack.capabilities() & Protocol.CAP_CRC32C) != 0);
      peer.send(new ReadRequest(1, "f.bin", 0, 1000));
      peer.send(new StatRequest(2, "f.bin"));
      peer.send(new ReadRequest(3, "f.bin", 5000, 70_000));
      ReadData first = (ReadData) peer.receive();
      assertEquals(1, first.requestId());
      byte[] p1 = peer.payload(1000);
      assertArrayEquals(Arrays.copyOfRange(data, 0, 1000), p1);
      assertEquals(crc(p1), peer.checksumTrailer());
      assertEquals(2, ((StatResponse) peer.receive()).requestId());
      ReadData third = (ReadData) peer.receive();
      assertEquals(3, third.requestId());
      byte[] p3 = peer.payload(70_000);
      assertArrayEquals(Arrays.copyOfRange(data, 5000, 75_000), p3);
      assertEquals(crc(p3), peer.checksumTrailer());
    }
  }

  @Test
  void overLimitReadIsRefusedAndTheConnectionCarriesOn() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.handshake();
      peer.send(new ReadRequest(1, "f.bin", 0, 100_001));
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertEquals(ErrorCode.LIMIT_EXCEEDED, e.code());
      assertEquals(1, e.requestId());
      assertTrue(e.message().contains("100001") && e.message().contains("'f.bin'"), e.message());
      peer.send(new ReadRequest(2, "f.bin", 0, 10));
      assertEquals(2, ((ReadData) peer.receive()).requestId());
      assertArrayEquals(Arrays.copyOf(data, 10), peer.payload(10));
    }
  }

  @Test
  void unknownMessageTypeIsNamedAndServerKeepsServing() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.handshake();
      peer.sendRaw(new byte[] {0, 0, 0, 1, (byte) 0xC8});
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.message().contains("Unknown message type 200"), e.message());
    }
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.handshake();
      peer.sendRaw(new byte[] {0x7f, 0, 0, 0, 1});
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertTrue(e.message().contains("Frame length 2130706432"), e.message());
    }
    assertServes(open);
  }

  /** Version 4, the one before (its LIST pages have no cursor), as any other. */
  @Test
  void unsupportedVersionIsNamed() throws IOException {
    for (int version : new int[] {4, 99}) {
      try (RawPeer peer = new RawPeer(open.port())) {
        ErrorResponse e = (ErrorResponse) peer.hello(version);
        assertEquals(ErrorCode.UNSUPPORTED_VERSION, e.code());
        assertTrue(e.message().contains("version " + version)
            && e.message().contains("version " + Protocol.VERSION), e.message());
      }
    }
    assertServes(open);
  }

  /** A request changed on the way is refused as corrupt, not served for what it now says. */
  @Test
  void aCorruptRequestIsRefusedNamingItsChecksum() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.handshake();
      byte[] stat = Frames.encode(new StatRequest(5, "f.bin")).array();
      stat[stat.length - 6] ^= 1;
      peer.sendRaw(stat);
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.message().contains("CRC32C mismatch in the STAT frame"), e.message());
    }
    assertServes(open);
  }

  /** A version-3 client sends its HELLO without a checksum, and must still be told why not. */
  @Test
  void aClientOfVersion3IsToldTheVersionsNotThatItsFrameIsCorrupt() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.sendRaw(Protocol.MAGIC);
      peer.sendRaw(ByteBuffer.allocate(4 + 1 + 2 + 8 + Protocol.NONCE_BYTES)
          .putInt(1 + 2 + 8 + Protocol.NONCE_BYTES).put(MessageType.HELLO.id()).putShort((short) 3)
          .putLong(Protocol.CAP_TCP).put(peer.clientNonce).array());
      peer.payload(Protocol.MAGIC.length);
      // As version 3 reads it: length, then type and body to the end, no checksum.
      int length = ByteBuffer.wrap(peer.payload(4)).getInt();
      java.nio.ByteBuffer content = ByteBuffer.wrap(peer.payload(length));
      assertEquals(MessageType.ERROR.id(), content.get());
      ErrorResponse e = ErrorResponse.decode(content);
      assertFalse(content.hasRemaining(), "bytes after the refusal a version-3 client cannot read");
      assertEquals(ErrorCode.UNSUPPORTED_VERSION, e.code());
      assertTrue(e.message().contains("version 3") && e.message().contains("version " + Protocol.VERSION),
          e.message());
    }
    assertServes(open);
  }

  @Test
  void foreignPeerIsRecognised() throws IOException {
    try (RawPeer peer = new RawPeer(open.port())) {
      peer.sendRaw("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      ByteBuffer magic = ByteBuffer.allocate(4);
      io.gpudirect.protocol.Frames.readFully(peer.channel, magic, false);
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertTrue(e.message().contains("not a gpudirect peer") && e.message().contains("'GET '"),
          e.message());
    }
    assertServes(open);
  }

  @Test
  void rightSecretWorks() {
    try (BlockClient c = BlockClient.connect(address(guarded),
        ClientConfig.builder().secret(SECRET).streams(2).build())) {
      ByteBuffer dst = ByteBuffer.allocate(data.length);
      c.read("f.bin", 0, dst);
      assertArrayEquals(data, dst.array());
    }
  }

  @Test
  void wrongAndMissingSecretsFailDistinctly() {
    AuthenticationException wrong = assertThrows(AuthenticationException.class,
        () -> BlockClient.connect(address(guarded),
            ClientConfig.builder().secret("guess".getBytes()).build()));
    assertTrue(wrong.getMessage().startsWith("Secret rejected by gpudirect server 127.0.0.1:"
        + guarded.port() + ": the secret in the client's secret (spark.gpudirect.auth.secret"),
        wrong.getMessage());
    AuthenticationException missing = assertThrows(AuthenticationException.class,
        () -> BlockClient.connect(address(guarded), ClientConfig.defaults()));
    assertTrue(missing.getMessage().startsWith("Gpudirect server 127.0.0.1:" + guarded.port()
        + " requires a secret: set the client's secret (spark.gpudirect.auth.secret"),
        missing.getMessage());
    AuthenticationException unproven = assertThrows(AuthenticationException.class,
        () -> BlockClient.connect(address(open), ClientConfig.builder().secret(SECRET).build()));
    assertTrue(unproven.getMessage().contains("does not require a secret"),
        unproven.getMessage());
    assertTrue(guarded.stats().authFailures() >= 1);
  }

  /**
   * A server bound to every interface knows itself as 0.0.0.0: the client names the address
   * it dialled instead, and the setting its own user sets the secret with.
   */
  @Test
  void aRejectedSecretNamesTheDialledAddressAndTheCallersSetting() {
    try (BlockServer everywhere = BlockServer.builder().root(root).bindAddress("0.0.0.0").port(0)
        .secret(SECRET).build().start()) {
      AuthenticationException wrong = assertThrows(AuthenticationException.class,
          () -> BlockClient.connect(new InetSocketAddress("127.0.0.1", everywhere.port()),
              ClientConfig.builder().secret("guess".getBytes()).maxRetries(0)
                  .secretSetting("--secret-file FILE (or $GPUDIRECT_SECRET_FILE)").build()));
      assertEquals("Secret rejected by gpudirect server 127.0.0.1:" + everywhere.port()
          + ": the secret in --secret-file FILE (or $GPUDIRECT_SECRET_FILE) is not the one the"
          + " server was started with (its --secret-file)", wrong.getMessage());
    }
  }

  @Test
  void aRootThatCannotBeServedSaysWhy() throws IOException {
    Path missing = root.resolve("no-such-dir");
    var e = assertThrows(io.gpudirect.GpuDirectException.class,
        () -> BlockServer.builder().root(missing).port(0).build().start());
    assertEquals("Cannot serve root " + missing + ": it does not exist; pass --root an existing"
        + " directory this user can read", e.getMessage());
    Path file = root.resolve("f.bin");
    e = assertThrows(io.gpudirect.GpuDirectException.class,
        () -> BlockServer.builder().root(file).port(0).build().start());
    assertTrue(e.getMessage().startsWith("Cannot serve root " + file + ": it is not a directory"),
        e.getMessage());
  }

  /** A bind address that names nothing said "null" (a Java exception without a message). */
  @Test
  void aBindAddressThatCannotBeListenedOnSaysWhy() {
    var e = assertThrows(io.gpudirect.GpuDirectException.class,
        () -> BlockServer.builder().root(root).bindAddress("no-such-host.invalid").port(0).build().start());
    assertTrue(e.getMessage().startsWith("Cannot listen on no-such-host.invalid:0: ")
        && e.getMessage().contains("--bind") && !e.getMessage().contains("null"), e.getMessage());
  }

  @Test
  void noFileAccessBeforeAuthentication() throws IOException {
    try (RawPeer peer = new RawPeer(guarded.port())) {
      HelloAck ack = peer.handshake();
      assertTrue(ack.authRequired());
      peer.send(new ReadRequest(1, "f.bin", 0, 10));
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertEquals(ErrorCode.AUTH_FAILED, e.code());
      assertTrue(e.message().contains("requires authentication before READ"), e.message());
      assertThrows(IOException.class, () -> {
        peer.receive();
        peer.payload(1);
      });
    }
  }

  @Test
  void aCapturedProofCannotBeReplayed() throws IOException {
    byte[] captured;
    try (RawPeer first = new RawPeer(guarded.port())) {
      HelloAck ack = first.handshake();
      captured = Auth.clientProof(SECRET, ack.serverNonce(), first.clientNonce);
      first.send(new AuthResponse(captured));
      AuthOk ok = (AuthOk) first.receive();
      assertArrayEquals(Auth.serverProof(SECRET, ack.serverNonce(), first.clientNonce), ok.mac());
    }
    try (RawPeer replay = new RawPeer(guarded.port())) {
      replay.handshake();
      replay.send(new AuthResponse(captured));
      Message m = replay.receive();
      assertEquals(ErrorCode.AUTH_FAILED, assertInstanceOf(ErrorResponse.class, m).code());
    }
  }

  @Test
  void aRangeWhoseBlocksAreAllCachedIsChecksummedWithoutThePool(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("again.bin");
    byte[] data = TestFiles.write(file, 3_000_000, 3);
    java.nio.file.Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(
        java.time.Instant.now().minusSeconds(60)));
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
         BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().chunkSize(1 << 20).build())) {
      // Ends inside blocks, so that each chunk's partial blocks are read and combined too.
      ByteBuffer got = ByteBuffer.allocateDirect(data.length - 1000);
      c.read("again.bin", 777, got);
      long handedOff = s.context().checksums().tasks();
      assertTrue(handedOff > 0, "the first read computes the blocks' checksums on the pool");
      for (int i = 0; i < 3; i++) {
        c.read("again.bin", 777, got.clear());
        assertEquals(ByteBuffer.wrap(data, 777, data.length - 1000), got.flip());
      }
      assertEquals(handedOff, s.context().checksums().tasks(),
          "reads of cached blocks are checksummed by the connection's thread, with no hand-off");
    }
  }

  @Test
  void aFileReadAgainIsChecksummedFromCachedBlocksAndARewriteIsSeen(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("epoch.bin");
    byte[] first = TestFiles.write(file, 3_000_000, 1);
    java.nio.file.Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(
        java.time.Instant.now().minusSeconds(60)));
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
         BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().chunkSize(1 << 20).build())) {
      ByteBuffer got = ByteBuffer.allocateDirect(first.length - 777);
      c.read("epoch.bin", 777, got);
      assertEquals(ByteBuffer.wrap(first, 777, first.length - 777), got.flip());
      long computed = s.context().blockChecksums().misses();
      assertTrue(computed > 0, "the first read checksums whole blocks for the cache");
      c.read("epoch.bin", 777, got.clear());
      assertEquals(ByteBuffer.wrap(first, 777, first.length - 777), got.flip());
      assertEquals(computed, s.context().blockChecksums().misses(),
          "the second read reads no whole block to checksum it");
      assertTrue(s.context().blockChecksums().hits() > 0);

      // Rewritten in place, same size and inode, dated back again: new bytes, new checksums.
      byte[] second = TestFiles.write(file, 3_000_000, 2);
      java.nio.file.Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(
          java.time.Instant.now().minusSeconds(30)));
      c.read("epoch.bin", 777, got.clear());
      assertEquals(ByteBuffer.wrap(second, 777, second.length - 777), got.flip());
    }
  }

  @Test
  void closeIsGracefulAndPrompt(@TempDir Path dir) throws IOException {
    TestFiles.write(dir.resolve("x.bin"), 1000, 1);
    // A grace period longer than the test may run: an idle close must not wait for it.
    BlockServer s = BlockServer.builder().root(dir).port(0).shutdownGracePeriod(java.time.Duration.ofSeconds(60))
        .build().start();
    BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().streams(2)
        .maxRetries(0).build());
    try {
      c.read("x.bin", 0, ByteBuffer.allocate(1000));
      long t0 = System.nanoTime();
      s.close();
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "idle close is prompt");
      assertEquals(0, s.stats().connectionsActive());
      Exception e = assertThrows(Exception.class, () -> c.read("x.bin", 0, ByteBuffer.allocate(10)));
      assertTrue(e.getMessage().contains("127.0.0.1:" + s.port()), e.getMessage());
    } finally {
      c.close();
    }
  }

  // It writes 4,200 files first: on the 2-core build machine at load average 33 that and the
  // listing outlasted the class's 30 s, which guards against a hang, not a slow machine.
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void listingsArePaged(@TempDir Path dir) throws IOException {
    // ~4200 entries of ~250 bytes: more than one 1 MiB frame.
    String pad = "x".repeat(240);
    for (int i = 0; i < 4200; i++) {
      java.nio.file.Files.createFile(dir.resolve(String.format("%s%05d", pad, i)));
    }
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
        BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().streams(1).build())) {
      java.util.List<io.gpudirect.client.FileEntry> all = c.list("/");
      assertEquals(4200, all.size());
      assertEquals(pad + "04199", all.get(4199).path());
      assertTrue(s.stats().requests() >= 2, "more than one page: " + s.stats());
    }
  }

  @Test
  void garbageAfterTheHandshakeNeverStopsTheServer() throws IOException {
    java.util.Random random = new java.util.Random(42);
    for (int i = 0; i < 30; i++) {
      try (RawPeer peer = new RawPeer(open.port())) {
        peer.handshake();
        byte[] junk = new byte[random.nextInt(200)];
        random.nextBytes(junk);
        if (junk.length > 4) {
          junk[0] = 0; // keep most frame lengths small so the server reads the junk
        }
        peer.sendRaw(junk);
      }
    }
    assertServes(open);
  }

  @Test
  void serverThreadsEndWithTheServer(@TempDir Path dir) throws Exception {
    java.util.Set<Thread> before = Settle.threadsNow();
    try (BlockServer s = BlockServer.builder().root(dir).port(0).build().start();
        BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().streams(3).build())) {
      // accept, the timers (handshake deadlines, idle files, log summaries), one per connection
      assertEquals(5, Settle.count(() -> Settle.threadsSince(before, "gpudirect-server"), 5));
    }
    assertEquals(0, Settle.count(() -> Settle.threadsSince(before, "gpudirect-server"), 0));
  }

  @Test
  void closeLetsAReadInFlightFinish(@TempDir Path dir) throws Exception {
    byte[] bytes = TestFiles.write(dir.resolve("big.bin"), 20 << 20, 11);
    BlockServer s = BlockServer.builder().root(dir).port(0).maxReadLength(32 << 20)
        .shutdownGracePeriod(java.time.Duration.ofSeconds(60)).build().start();
    try (RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      peer.send(new ReadRequest(1, "big.bin", 0, bytes.length));
      // The server is now blocked sending 20 MiB nobody reads yet.
      assertEquals(1, ((ReadData) peer.receive()).requestId());
      Thread closer = new Thread(s::close);
      closer.start();
      Thread.sleep(200);
      assertTrue(closer.isAlive(), "close waits for the read in flight");
      assertArrayEquals(bytes, peer.payload(bytes.length));
      closer.join(20_000);
      assertTrue(!closer.isAlive(), "close returns once the read is done, not after the grace period");
      assertEquals(bytes.length, s.stats().bytesSent());
    } finally {
      s.close();
    }
  }

  @Test
  void refusesToServeAMissingRoot(@TempDir Path dir) {
    assertThrows(io.gpudirect.GpuDirectException.class, () -> BlockServer.builder()
        .root(dir.resolve("nope")).port(0).build().start());
  }

  private static void assertServes(BlockServer s) {
    try (BlockClient c = BlockClient.connect(address(s), ClientConfig.builder().streams(1).build())) {
      ByteBuffer dst = ByteBuffer.allocate(100);
      c.read("f.bin", 100, dst);
      assertArrayEquals(Arrays.copyOfRange(data, 100, 200), dst.array());
    }
  }

  private static int crc(byte[] b) {
    CRC32C c = new CRC32C();
    c.update(b);
    return (int) c.getValue();
  }
}
