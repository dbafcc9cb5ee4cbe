package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.TestCertificates;
import io.gpudirect.tls.TlsContexts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server that anyone who can reach it may read from (bound beyond loopback, no secret) says so
 * loudly when it starts, with what to do; one that only this host can reach, or that asks a
 * secret, does not (before: one INFO line, "authentication off").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExposedServerWarningTest {
  static final byte[] SECRET = "exposed-server-warning-test".getBytes(StandardCharsets.UTF_8);

  @TempDir Path root;

  @Test
  void everyInterfaceAndNoSecretIsWarnedAboutWithTheFix() throws Exception {
    String log = started(BlockServer.builder().bindAddress("0.0.0.0"));
    assertTrue(log.contains("anyone who can reach port ") && log.contains("can read every file under " + root.toRealPath()),
        log);
    assertTrue(log.contains("--secret-file") && log.contains("--tls-cert") && log.contains("--tls-key"), log);
    assertTrue(log.lines().filter(l -> l.contains(" WARN ")).count() >= 2, "loud: " + log);
  }

  @Test
  void tlsWithoutASecretIsWarnedAboutToo(@TempDir Path keys) throws Exception {
    TestCertificates cert = TestCertificates.create(keys, "server");
    String log = started(BlockServer.builder().bindAddress("0.0.0.0")
        .tls(TlsContexts.server(cert.certificate(), cert.privateKey())));
    assertTrue(log.contains("anyone who can reach port ") && log.contains("--secret-file"), log);
  }

  @Test
  void loopbackOrASecretIsNotWarnedAbout() throws Exception {
    assertFalse(started(BlockServer.builder().bindAddress("127.0.0.1")).contains("anyone who can reach"));
    assertFalse(started(BlockServer.builder().bindAddress("0.0.0.0").secret(SECRET))
        .contains("anyone who can reach"));
  }

  /** What starting (and stopping) the server logs. */
  private String started(BlockServerBuilder builder) throws Exception {
    return HostileConnectionsLogTest.logged(() -> {
      try (BlockServer s = builder.root(root).port(0).build().start()) {
        assertEquals(0, s.stats().connectionsActive());
      }
      return null;
    });
  }
}
