package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackCutter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark task that fails and is retried re-reads correctly. The job runs in its own JVM with
 * {@code --master local[1,3]} (this run's shared session allows no task retries); gpudirect
 * itself may not retry ({@code maxRetries=0}), and a {@link LoopbackCutter} between Spark and
 * the server cuts the first connection part way through the data, so the first attempt of a
 * task fails and Spark runs it again on a new connection.
 */
class TaskRetryIT {
  private static final String FILE = "delta_binary_packed.parquet";

  @TempDir
  Path tmp;

  @Test
  void aRetriedTaskReadsExactlyTheRows() throws Exception {
    Path parquet = LocalSpark.testdata().resolve("parquet");
    try (BlockServer server = BlockServer.builder().root(parquet).port(0).build().start();
        // The first connection carries the driver's footer read and the task's (each the
        // file's last 64 KiB: the footer with its length), then the task's 8 KB chunks of the
        // 73 KB file's column data: cut it 30 KB into those.
        LoopbackCutter cutter = new LoopbackCutter(server.port(), 2 * 65_536 + 30_000, 1)) {
      String out = SparkSubmitProcess.submit(tmp, RetryApp.class, "local[1,3]", List.of(), 0,
          "gpudirect://127.0.0.1:" + cutter.port() + "/" + FILE, parquet.resolve(FILE).toString());
      System.out.println(out);
      assertTrue(cutter.faultsInjected() >= 1, "the connection was cut: " + out);
      assertTrue(out.contains("rows=200 equal=true"), out);
      assertTrue(out.matches("(?s).*maxAttempt=[1-9].*"), "a task attempt after the first produced rows: " + out);
    }
  }
}
