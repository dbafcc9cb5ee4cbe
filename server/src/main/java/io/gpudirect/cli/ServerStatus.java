package io.gpudirect.cli;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/** {@code gpudirect server --status URI}: one STATUS request on one authenticated connection. */
final class ServerStatus {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private ServerStatus() {}

  /**
   * The server's counters, by name, in the server's order, asked once over one TCP connection of
   * {@code config}'s secret and TLS (a status is not worth setting up RDMA, nor a second try).
   */
  static Map<String, Long> fetch(GpuDirectUri server, ClientConfig.Builder config) {
    ClientConfig once = config.streams(1).transport("tcp").maxRetries(0).connectTimeout(TIMEOUT)
        .requestTimeout(TIMEOUT).build();
    try (RemoteStore store = BlockClient.connect(new InetSocketAddress(server.host(), server.port()), once)) {
      return store.status();
    }
  }

  static int print(String uri, ClientConfig.Builder config, PrintStream out) {
    GpuDirectUri server = GpuDirectUri.parse(uri);
    Map<String, Long> counters = fetch(server, config);
    out.println("gpudirect server " + server.authority());
    // Names come from the server: escaped, as ls escapes file names.
    counters.forEach((name, value) -> out.printf("  %-22s %d%n", TerminalText.escape(name), value));
    out.flush();
    return 0;
  }
}
