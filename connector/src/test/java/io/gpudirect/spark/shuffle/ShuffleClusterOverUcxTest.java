package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.verbs.ucx.UcxLibrary;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shuffle over UCX on a two-executor cluster ({@code spark.gpudirect.shuffle.transport=rdma},
 * {@code rdma.provider=ucx}; here UCX runs over TCP and shared memory, as there is no RDMA device):
 * each executor's server serves RDMA too, the reducers fetch every remote block on the queue pair,
 * and the queries give the rows of Spark's own shuffle. On the Spark 3.5 line only (the pom's
 * spark4 profile): below the shuffle manager, which the other cluster tests run on Spark 4, the
 * queue pairs are the same code whichever Spark drives them.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("spark35-line")
class ShuffleClusterOverUcxTest {
  @TempDir Path tmp;

  @Test
  void queriesOverUcxGiveTheRowsOfSparksOwnShuffle() throws Exception {
    String missing = UcxLibrary.unavailableReason();
    assumeTrue(missing == null, "UCX is not installed here (apt-get install libucx0): " + missing);
    Map<String, List<String>> expected = ShuffleClusterQueriesTest.rowsOfSparksOwnShuffle();
    try (ShuffleCluster cluster = ShuffleCluster.start("gpudirect-shuffle-ucx", tmp, Map.of(
        "spark.gpudirect.shuffle.transport", "rdma", "spark.gpudirect.shuffle.rdma.provider", "ucx"))) {
      ShuffleClusterQueriesTest.assertSameRows(expected, cluster);
      Map<String, Long> bytes = cluster.bytesFetchedByTransport();
      assertEquals(1, bytes.size(), "one transport: " + bytes);
      String transport = bytes.keySet().iterator().next();
      assertTrue(transport.startsWith("ucx"), "the blocks went over UCX: " + bytes);
      assertTrue(bytes.get(transport) > 0, "bytes over UCX: " + bytes);
    }
  }
}
