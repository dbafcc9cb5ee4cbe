package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.tls.TlsContexts;
import io.gpudirect.transport.AuthenticationException;
import io.gpudirect.transport.ConnectFailedException;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.TlsMismatchException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the TCP path, end to end through {@link BlockClient} against a real server with a
 * certificate made at test time: bytes, checksums and the shared secret all work inside TLS;
 * every way of getting TLS wrong ends in one clear error within the connect timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsBlockClientTest {
  static final byte[] SECRET = "tls-test-secret-long-enough".getBytes(StandardCharsets.UTF_8);
  static final int BIG = 3 * 1024 * 1024 + 17;

  @TempDir static Path root;
  @TempDir static Path keys;
  static TestCertificates serverCert;
  static TestCertificates otherCert;
  static BlockServer tlsServer;
  static BlockServer plainServer;
  static byte[] big;

  @BeforeAll
  static void start() throws IOException {
    big = TestFiles.write(root.resolve("data/big.bin"), BIG, 7);
    TestFiles.write(root.resolve("data/small.bin"), 100, 8);
    serverCert = TestCertificates.create(keys, "server");
    otherCert = TestCertificates.create(keys, "other");
    tlsServer = BlockServer.builder().root(root).port(0).secret(SECRET)
        .tls(TlsContexts.server(serverCert.certificate(), serverCert.privateKey()))
        .handshakeTimeout(Duration.ofSeconds(3)).build().start();
    plainServer = BlockServer.builder().root(root).port(0).secret(SECRET).build().start();
  }

  @AfterAll
  static void stop() {
    tlsServer.close();
    plainServer.close();
  }

  static ClientConfig.Builder tlsConfig(Path trust) {
    return ClientConfig.builder().streams(2).chunkSize(256 * 1024).maxBytesInFlight(1 << 20)
        .secret(SECRET).tls(true).tlsTrustStore(trust).maxRetries(1)
        .retryBackoff(Duration.ofMillis(10)).connectTimeout(Duration.ofSeconds(5));
  }

  static InetSocketAddress local(int port) {
    return new InetSocketAddress("127.0.0.1", port);
  }

  @Test
  void readsListsAndChecksumsWorkOverTls() throws Exception {
    BufferAllocator allocator = BufferAllocator.root().newChildAllocator("tls-test", 64L << 20);
    try (BlockClient client = BlockClient.connect(local(tlsServer.port()),
        tlsConfig(serverCert.certificate()).build())) {
      assertEquals(List.of("data/big.bin", "data/small.bin"),
          client.list("").stream().map(FileEntry::path).toList());
      assertEquals(BIG, client.stat("data/big.bin").length());
      // Whole file into a direct buffer: decrypted straight into it.
      try (HostBuffer whole = allocator.allocate(BIG)) {
        client.read("data/big.bin", 0, whole.nioBuffer());
        assertEquals(ByteBuffer.wrap(big), whole.nioBuffer());
      }
      // Ranges of odd sizes into heap buffers, some smaller than one TLS record.
      Random random = new Random(3);
      for (int i = 0; i < 40; i++) {
        int offset = random.nextInt(BIG);
        int length = random.nextInt(Math.min(BIG - offset, i % 2 == 0 ? 100 : 700_000) + 1);
        ByteBuffer dst = ByteBuffer.allocate(length);
        client.read("data/big.bin", offset, dst);
        assertArrayEquals(Arrays.copyOfRange(big, offset, offset + length), dst.array(),
            "offset " + offset + " length " + length);
      }
    } finally {
      allocator.assertNoLeaks();
      allocator.close();
    }
  }

  @Test
  void localhostIsCheckedAgainstTheCertificateToo() {
    try (BlockClient client = BlockClient.connect(new InetSocketAddress("localhost", tlsServer.port()),
        tlsConfig(serverCert.certificate()).build())) {
      ByteBuffer dst = ByteBuffer.allocate(100);
      client.read("data/small.bin", 0, dst);
      assertEquals(100, dst.position());
    }
  }

  @Test
  void aServerWhoseCertificateIsNotTrustedIsRefused() {
    long start = System.nanoTime();
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> BlockClient.connect(local(tlsServer.port()), tlsConfig(otherCert.certificate()).build()));
    assertTrue(e.getMessage().contains("TLS handshake with gpudirect server 127.0.0.1:"
        + tlsServer.port() + " failed") && e.getMessage().contains("tls.trustStore"), e.getMessage());
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "failed promptly");
    // The JDK's default CAs do not know a self-signed certificate either.
    assertThrows(AuthenticationException.class,
        () -> BlockClient.connect(local(tlsServer.port()), tlsConfig(null).build()));
  }

  @Test
  void aPlaintextClientIsToldTheServerRequiresTls() {
    ClientConfig plain = tlsConfig(null).tls(false).build();
    ServerErrorException e = assertThrows(ServerErrorException.class,
        () -> BlockClient.connect(local(tlsServer.port()), plain));
    assertTrue(e.getMessage().contains("requires TLS") && e.getMessage().contains("tls=true"),
        e.getMessage());
  }

  @Test
  void aTlsClientOfAPlaintextServerSaysSo() {
    TlsMismatchException e = assertThrows(TlsMismatchException.class,
        () -> BlockClient.connect(local(plainServer.port()), tlsConfig(serverCert.certificate()).build()));
    assertTrue(e.getMessage().contains("answered in plaintext")
        && e.getMessage().contains("without --tls-cert"), e.getMessage());
  }

  @Test
  void aSilentOrForeignPeerIsDroppedWithinTheHandshakeTimeout() throws Exception {
    // Says nothing at all: the server gives up after its handshake timeout (3 s here).
    try (RawPeer silent = new RawPeer(tlsServer.port())) {
      long start = System.nanoTime();
      assertEquals(-1, silent.channel.socket().getInputStream().read());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(6));
    }
    // Not TLS and not gpudirect: closed without an answer.
    try (RawPeer http = new RawPeer(tlsServer.port())) {
      http.sendRaw("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      assertEquals(-1, http.channel.socket().getInputStream().read());
    }
    // The server still serves TLS clients.
    try (BlockClient client = BlockClient.connect(local(tlsServer.port()),
        tlsConfig(serverCert.certificate()).build())) {
      assertEquals(100, client.stat("data/small.bin").length());
    }
  }

  @Test
  void badKeyFilesAreNamed(@TempDir Path dir) throws IOException {
    Path rsa = Files.writeString(dir.resolve("rsa.pem"),
        "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
    GpuDirectException pkcs1 = assertThrows(GpuDirectException.class,
        () -> TlsContexts.server(serverCert.certificate(), rsa));
    assertTrue(pkcs1.getMessage().contains("openssl pkcs8 -topk8"), pkcs1.getMessage());
    GpuDirectException noCert = assertThrows(GpuDirectException.class,
        () -> TlsContexts.client(serverCert.privateKey()));
    assertTrue(noCert.getMessage().contains("holds no PEM certificate"), noCert.getMessage());
    GpuDirectException mismatch = assertThrows(GpuDirectException.class,
        () -> TlsContexts.server(serverCert.certificate(), otherCert.privateKey()));
    assertTrue(mismatch.getMessage().contains("does not belong to"), mismatch.getMessage());
  }

  /** A key of another algorithm than the certificate's is named as not its key, with both files. */
  @Test
  void aKeyOfAnotherAlgorithmIsNamedAsNotTheCertificatesKey(@TempDir Path dir) throws Exception {
    KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    Path rsaKey = Files.writeString(dir.resolve("rsa-key.pem"), "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(
            rsa.generateKeyPair().getPrivate().getEncoded()) + "\n-----END PRIVATE KEY-----\n");
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> TlsContexts.server(serverCert.certificate(), rsaKey));
    assertTrue(e.getMessage().contains("--tls-key " + rsaKey) && e.getMessage().contains("--tls-cert "
        + serverCert.certificate()) && e.getMessage().contains("does not belong to"), e.getMessage());
    assertTrue(e.getMessage().contains("an RSA key") && e.getMessage().contains("an EC key"), e.getMessage());
    assertFalse(e.getMessage().contains("Exception"), e.getMessage());
  }

  /** TLS on one side only cannot succeed by trying again: one connection, not one per retry. */
  @Test
  void tlsOnOneSideOnlyIsNotRetried() {
    ClientConfig.Builder tls = tlsConfig(serverCert.certificate()).streams(1).maxRetries(3);
    long before = plainServer.stats().connectionsAccepted();
    assertThrows(GpuDirectException.class, () -> BlockClient.connect(local(plainServer.port()), tls.build()));
    assertEquals(1, plainServer.stats().connectionsAccepted() - before, "connections to the plaintext server");
    before = tlsServer.stats().connectionsAccepted();
    assertThrows(GpuDirectException.class,
        () -> BlockClient.connect(local(tlsServer.port()), tls.tls(false).tlsTrustStore(null).build()));
    assertEquals(1, tlsServer.stats().connectionsAccepted() - before, "connections to the TLS server");
  }

  /**
   * A TLS server over its limit turns a connection away in plaintext too, before TLS: that one
   * is told apart by what follows the magic, and stays worth a retry.
   */
  @Test
  void aTlsServerOverItsLimitIsToldApartFromAPlaintextServer() throws Exception {
    ClientConfig.Builder oneStream = tlsConfig(serverCert.certificate()).streams(1);
    try (BlockServer full = BlockServer.builder().root(root).port(0).secret(SECRET)
        .tls(TlsContexts.server(serverCert.certificate(), serverCert.privateKey())).maxConnections(1).build().start();
        BlockClient first = BlockClient.connect(local(full.port()), oneStream.build())) {
      first.stat("data/small.bin");
      ConnectFailedException e = assertThrows(ConnectFailedException.class,
          () -> BlockClient.connect(local(full.port()), oneStream.maxRetries(0).build()));
      assertTrue(e.getMessage().contains("limit of 1 connections"), e.getMessage());
    }
  }
}
