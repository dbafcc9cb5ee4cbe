package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.StatusRequest;
import io.gpudirect.protocol.StatusResponse;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.tcp.TcpTransport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@code gpudirect server --status URI}: one STATUS request on one authenticated connection. */
final class ServerStatus {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private ServerStatus() {}

  /** The server's counters, by name, in the server's order. */
  static Map<String, Long> fetch(GpuDirectUri server, String secret, SSLContext tls) {
    InetSocketAddress address = new InetSocketAddress(server.host(), server.port());
    try (ConnectionThreads threads = new ConnectionThreads();
        Connection c = new TcpTransport(threads).connect(address, new ConnectionOptions(
        secret == null ? null : secret.getBytes(StandardCharsets.UTF_8), TIMEOUT, "gpudirect-status",
        true, tls).withSecretSetting(SecretFile.SETTING))) {
      Message answer = c.call(new StatusRequest(1)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return ((StatusResponse) answer).counters();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new GpuDirectException("Cannot get the status of gpudirect server " + server.authority() + ": "
          + cause.getMessage(), cause);
    } catch (TimeoutException e) {
      throw new GpuDirectException("Gpudirect server " + server.authority() + " did not answer STATUS within "
          + TIMEOUT.toSeconds() + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GpuDirectException("Interrupted waiting for the status of " + server.authority(), e);
    }
  }

  static int print(String uri, String secret, SSLContext tls, PrintStream out) {
    GpuDirectUri server = GpuDirectUri.parse(uri);
    Map<String, Long> counters = fetch(server, secret, tls);
    out.println("gpudirect server " + server.authority());
    // Names come from the server: escaped, as ls escapes file names.
    counters.forEach((name, value) -> out.printf("  %-22s %d%n", TerminalText.escape(name), value));
    out.flush();
    return 0;
  }
}
