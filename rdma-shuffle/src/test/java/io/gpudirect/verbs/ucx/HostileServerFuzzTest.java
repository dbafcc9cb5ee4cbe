package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.ChildProcess;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.RdmaBound;
import io.gpudirect.server.BlockServer;
import io.gpudirect.transport.rdma.RdmaClientUnderFuzz;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile server against the client's queue pair, over real UCX: the client (in a JVM of its
 * own, {@link RdmaClientUnderFuzz}) connects its queue pair to a server that sends crafted and
 * random frames. Each connection must fail with an error naming the server, never with data and
 * never by a crash; at the end the client has leaked nothing. Issue 28, attack 2: a key whose
 * size bytes send UCX past its buffer killed the client's JVM (rc 134).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class HostileServerFuzzTest {
  private static final long SEED = 0x28_2026_12_05L;

  @TempDir static Path root;
  static BlockServer control;

  @BeforeAll
  static void start() {
    RdmaOverUcxConformanceTest.needsUcx();
    // A real server for the connections' control channel; their queue pairs go to the hostile one.
    control = BlockServer.builder().root(root).port(0).build().start();
  }

  @AfterAll
  static void stop() {
    if (control != null) {
      control.close();
    }
  }

  @Test
  void anExplodingKeyFromTheServerFailsTheReadNotTheClient() throws Exception {
    try (FuzzingUcxServer hostile = new FuzzingUcxServer(i -> java.util.Collections.nCopies(1000,
            UcxFrames.rkey(1, 0x1000, 4096, 0, UcxFrames.explodingKey())));
        ChildProcess client = ChildJvm.start(RdmaClientUnderFuzz.class, String.valueOf(control.port()),
            String.valueOf(hostile.port()), "5")) {
      assertEquals(0, client.awaitExit(Duration.ofSeconds(120)), client.describe());
      client.awaitLine("survived 5", Duration.ofSeconds(1));
    }
  }

  @Test
  void aClientSurvivesAHundredThousandCraftedAndRandomFrames() throws Exception {
    int connections = 200;
    try (FuzzingUcxServer hostile = new FuzzingUcxServer(i -> {
          ControlStreamFuzz fuzz = new ControlStreamFuzz(SEED + i);
          List<ByteBuffer> frames = new ArrayList<>();
          if (fuzz.nextInt(2) == 0) {
            // bound: the client's read goes out and waits for its answer
            frames.add(UcxFrames.send(Frames.encode(new RdmaBound())));
          }
          frames.addAll(fuzz.accepted(400 + fuzz.nextInt(400)));
          frames.add(fuzz.breaker());
          return frames;
        });
        ChildProcess client = ChildJvm.start(RdmaClientUnderFuzz.class, String.valueOf(control.port()),
            String.valueOf(hostile.port()), String.valueOf(connections))) {
      assertEquals(0, client.awaitExit(Duration.ofSeconds(240)), client.describe());
      client.awaitLine("survived " + connections, Duration.ofSeconds(1));
      assertTrue(hostile.framesSent() >= 100_000, "frames sent: " + hostile.framesSent());
    }
  }
}
