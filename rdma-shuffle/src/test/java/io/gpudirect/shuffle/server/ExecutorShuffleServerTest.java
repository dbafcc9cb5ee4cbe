package io.gpudirect.shuffle.server;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.verbs.ucx.UcxLibrary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an executor's server serves besides TCP, from the reducers' transport: RDMA over UCX's
 * TCP when they ask for {@code rdma}, and with {@code auto} only where UCX finds RDMA, which it
 * does not here (no RDMA device), so TCP alone.
 */
class ExecutorShuffleServerTest {
  @TempDir Path tmp;

  private String servedWith(String transport) throws Exception {
    List<Path> dirs = List.of(Files.createDirectories(tmp.resolve(transport + "/blockmgr-a")));
    try (ExecutorShuffleServer server = ExecutorShuffleServer.start(dirs, 64, "127.0.0.1", new byte[32],
        new ExecutorShuffleServer.Transport(transport, "ucx", null))) {
      return server.address();
    }
  }

  @Test
  void servesRdmaWhereReducersMayAskForIt() throws Exception {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    assertTrue(servedWith("rdma").contains("(tcp,ucx"), servedWith("rdma"));
    assertTrue(servedWith("auto").contains("(tcp;"), "no RDMA device here: " + servedWith("auto"));
    assertTrue(servedWith("tcp").contains("(tcp;"), servedWith("tcp"));
  }
}
