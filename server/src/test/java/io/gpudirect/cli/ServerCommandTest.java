package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.testing.ChildProcess;
import io.gpudirect.transport.TransportException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code gpudirect server} in a child JVM, as a user runs it. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServerCommandTest {
  @TempDir Path root;

  /**
   * 300 streams, or 64 executors at 4, found the server's 256 connections taken, and were told
   * to "raise maxConnections", which no option of the server did.
   */
  @Test
  void maxConnectionsIsAnOptionAndTheRefusalNamesIt() throws Exception {
    Files.writeString(root.resolve("a.txt"), "x");
    ChildProcess server = ChildProcess.start("gpudirect server", ChildCli.of("server", "--root", root.toString(),
        "--port", "0", "--rdma", "off", "--max-connections", "1"));
    try {
      InetSocketAddress address = new InetSocketAddress("127.0.0.1", ChildCli.awaitPort(server));
      ClientConfig one = ClientConfig.builder().streams(1).maxRetries(0).build();
      try (BlockClient first = BlockClient.connect(address, one)) {
        first.stat("a.txt");
        TransportException refused = assertThrows(TransportException.class,
            () -> BlockClient.connect(address, one).close());
        assertTrue(refused.getMessage().contains("limit of 1 connections")
            && refused.getMessage().contains("--max-connections"), refused.getMessage());
      }
    } finally {
      assertTrue(server.stop(Duration.ofSeconds(30)), "the server stops on SIGTERM");
    }
  }
}
