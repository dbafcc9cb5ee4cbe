package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.Protocol;
import io.gpudirect.testing.RawPeer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.tls.TlsContexts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floods of connections that need no secret to make (garbage, connections past
 * {@code maxConnections}, plaintext or broken TLS against a TLS server) against a real server on
 * loopback: the log has a line or two per cause, with the counts, not a line per connection
 * (before: one WARN line each, 1,569 in 10 s).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileConnectionsLogTest {
  static final int GARBAGE = 500;
  static final int PAST_LIMIT = 100;
  /** Per cause: the first at once, then a summary per interval (the test's own, and perhaps the server's timer's). */
  static final int LINES_PER_CAUSE = 3;

  @Test
  void garbageAndConnectionsPastTheLimitAreLoggedAsAFewLinesWithTheirCounts(@TempDir Path root)
      throws Exception {
    try (BlockServer server = BlockServer.builder().root(root).port(0).maxConnections(1).build().start()) {
      String log = logged(() -> {
        for (int i = 0; i < GARBAGE; i++) {
          exchange(server.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        try (RawPeer served = new RawPeer(server.port())) {
          served.handshake();
          for (int i = 0; i < PAST_LIMIT; i++) {
            exchange(server.port(), new byte[0]);
          }
        }
        server.logSummaries();
        return null;
      });
      List<String> warnings = warnings(log);
      assertTrue(warnings.size() <= 2 * LINES_PER_CAUSE, GARBAGE + PAST_LIMIT + " hostile connections, "
          + warnings.size() + " WARN lines:\n" + String.join("\n", warnings));
      assertEquals(GARBAGE, connections(warnings, server, "broke the protocol before authenticating"), log);
      assertEquals(PAST_LIMIT, connections(warnings, server, "over maxConnections (1 served;"
          + " --max-connections raises it)"), log);
      assertTrue(log.contains("it began with 47 45 54 20 ('GET ') instead of GPDR"), "what was wrong: " + log);
    }
  }

  @Test
  void plaintextAndBrokenTlsAgainstATlsServerAreLoggedAsAFewLinesWithTheirCounts(@TempDir Path root,
      @TempDir Path keys) throws Exception {
    TestCertificates cert = TestCertificates.create(keys, "server");
    try (BlockServer server = BlockServer.builder().root(root).port(0)
        .tls(TlsContexts.server(cert.certificate(), cert.privateKey())).build().start()) {
      String log = logged(() -> {
        for (int i = 0; i < PAST_LIMIT; i++) {
          exchange(server.port(), Protocol.MAGIC);
          // A TLS record header (handshake, TLS 1.0) with a body that is no handshake message.
          exchange(server.port(), new byte[] {0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5});
        }
        server.logSummaries();
        return null;
      });
      List<String> warnings = warnings(log);
      assertTrue(warnings.size() <= 2 * LINES_PER_CAUSE, 2 * PAST_LIMIT + " hostile connections, "
          + warnings.size() + " WARN lines:\n" + String.join("\n", warnings));
      assertEquals(PAST_LIMIT, connections(warnings, server, "did not start TLS"), log);
      assertEquals(PAST_LIMIT, connections(warnings, server, "failed its TLS handshake"), log);
    }
  }

  /** Connects, sends {@code bytes}, reads whatever comes until the server closes. */
  static void exchange(int port, byte[] bytes) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(10_000);
      s.getOutputStream().write(bytes);
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      byte[] sink = new byte[4096];
      while (in.read(sink) >= 0) {
        // until the server closes
      }
    } catch (java.net.SocketException e) {
      // reset: the server closed with our bytes unread, which is what it does with garbage
    }
  }

  /**
   * How many connections the log's lines about {@code cause} account for: one for the line
   * that reports the first, N for each summary of N more.
   */
  static int connections(List<String> warnings, BlockServer server, String cause) {
    String on = Pattern.quote("BlockServer on " + server.address());
    Pattern first = Pattern.compile(on + " closed a connection from \\S+: " + Pattern.quote(cause));
    Pattern more = Pattern.compile(on + " closed (\\d+) more connections in the last \\d+ s: "
        + Pattern.quote(cause));
    int n = 0;
    int lines = 0;
    for (String w : warnings) {
      Matcher m = more.matcher(w);
      if (m.find()) {
        n += Integer.parseInt(m.group(1));
        lines++;
      } else if (first.matcher(w).find()) {
        n++;
        lines++;
      }
    }
    assertTrue(lines <= LINES_PER_CAUSE, lines + " lines about '" + cause + "':\n" + String.join("\n", warnings));
    return n;
  }

  static List<String> warnings(String log) {
    return log.lines().filter(l -> l.contains(" WARN ")).toList();
  }

  /** What {@code action} logs (slf4j-simple writes to System.err). */
  static String logged(Callable<Void> action) throws Exception {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      action.call();
    } finally {
      System.setErr(stderr);
    }
    return log.toString(StandardCharsets.UTF_8);
  }
}
