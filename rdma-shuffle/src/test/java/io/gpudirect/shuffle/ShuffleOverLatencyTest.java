package io.gpudirect.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.LoopbackDelay;
import io.gpudirect.testing.SparkShuffleLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small shuffle blocks from a server a long round trip away, over one stream (the shuffle's
 * default): they are in flight together, as many as a stream's bytes allow, not two per round
 * trip, so that the round trip is paid a few times per fetch, not once per pair of blocks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleOverLatencyTest {
  @TempDir static Path tmp;
  static SparkShuffleLayout layout;
  static ShuffleFetches reducer;
  static final int MAPS = 200;
  static final int BLOCK = 16 * 1024;

  @BeforeAll
  static void write() throws IOException {
    layout = new SparkShuffleLayout(List.of(tmp.resolve("d1/blockmgr-x")), 64);
    for (int m = 0; m < MAPS; m++) {
      layout.write(1, m, bytes(m, 0), bytes(m, 1));
    }
    reducer = new ShuffleFetches("shuffle-latency-test", ClientConfig.builder().streams(1)
        .connectTimeout(Duration.ofSeconds(10)).requestTimeout(Duration.ofSeconds(60)).build());
  }

  @AfterAll
  static void stop() {
    reducer.close();
  }

  static byte[] bytes(long map, int reduce) {
    byte[] b = new byte[BLOCK];
    new Random(map * 31 + reduce).nextBytes(b);
    return b;
  }

  /**
   * 200 blocks of 16 KiB, 100 ms away: two per round trip (as a stream took them when it
   * counted requests, not bytes) would take 100 round trips, 10 s; together, a few round trips
   * (the connection's handshake included) and the server's time.
   */
  @Test
  void smallBlocksOfAFarServerAreInFlightTogether() throws Exception {
    List<BlockToFetch> blocks = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      blocks.add(new BlockToFetch(ShuffleBlockId.of(1, m, 1), BLOCK));
    }
    long roundTripMillis = 100;
    try (BlockServer server = BlockServer.builder().shuffleDirectories(layout.localDirs(), 64).port(0).build().start();
        LoopbackDelay far = new LoopbackDelay(server.port(), roundTripMillis / 2, TimeUnit.MILLISECONDS)) {
      long start = System.nanoTime();
      Map<ShuffleBlockId, ShuffleFetches.Outcome> got = reducer.fetch(far.port(), FetchLimits.SPARK_DEFAULTS, blocks);
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(MAPS, got.size());
      got.forEach((id, o) -> assertArrayEquals(bytes(id.mapId(), 1), o.orThrow(), id.name()));
      assertTrue(millis < 25 * roundTripMillis, MAPS + " blocks took " + millis + " ms, "
          + millis / roundTripMillis + " round trips");
    }
  }
}
