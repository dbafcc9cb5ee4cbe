package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.tls.TlsContexts;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code gpudirect server --status} in this JVM, against a real server with a secret and TLS. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerStatusTest {
  private static final String SECRET = "status-test-secret-long-enough";
  private final PrintStream stdout = System.out;

  @AfterEach
  void restore() {
    System.setOut(stdout);
  }

  @Test
  void statusOverTlsWithTheSecretPrintsTheCountersAndWithoutItNamesTheSecretFile(@TempDir Path root,
      @TempDir Path keys) throws Exception {
    Files.writeString(root.resolve("a.txt"), "x");
    Path secretFile = keys.resolve("secret");
    Files.writeString(secretFile, SECRET);
    TestCertificates cert = TestCertificates.create(keys, "server");
    try (BlockServer server = BlockServer.builder().root(root).port(0)
        .secret(SECRET.getBytes(StandardCharsets.UTF_8))
        .tls(TlsContexts.server(cert.certificate(), cert.privateKey())).build().start()) {
      String uri = "gpudirect://127.0.0.1:" + server.port();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      assertEquals(0, GpuDirectCli.commandLine().execute("server", "--status", uri, "--secret-file",
          secretFile.toString(), "--tls-cert", cert.certificate().toString()));
      String printed = out.toString(StandardCharsets.UTF_8);
      assertTrue(printed.startsWith("gpudirect server 127.0.0.1:" + server.port() + "\n  bytesSent "),
          printed);
      assertTrue(printed.contains(String.format("  %-22s 1%n", "connectionsActive")),
          "the status's own connection: " + printed);

      StringWriter err = new StringWriter();
      CommandLine cli = GpuDirectCli.commandLine().setErr(new PrintWriter(err, true));
      assertEquals(1, cli.execute("server", "--status", uri, "--tls-cert", cert.certificate().toString()));
      assertTrue(err.toString().contains("--secret-file"), err.toString());
    }
  }
}
