package io.gpudirect.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading iperf3's {@code -J} output (3.12's layout), and byte sizes from the command line. */
class Iperf3Test {
  private static final String JSON = """
      {"end": {
        "sum_sent": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 1700000000, "bits_per_second": 13600000000.0, "retransmits": 0},
        "sum_received": {"start": 0, "end": 1.002689, "seconds": 1.002689, "bytes": 1676410880,
          "bits_per_second": 13375320802.362448, "sender": true},
        "cpu_utilization_percent": {"host_total": 78.18, "host_user": 2.31, "host_system": 75.87,
          "remote_total": 39.62, "remote_user": 4.63, "remote_system": 34.99}}}
      """;

  @Test
  void readsReceivedBytesAndBothEndsCpu() {
    Measurement m = Iperf3.parse(JSON);
    assertEquals(1676410880L, m.bytes());
    assertEquals(1.002689, m.seconds(), 1e-9);
    // (78.18 % + 39.62 %) of one core over 1.0027 s
    assertEquals((78.18 + 39.62) / 100 * 1.002689, m.cpuSeconds(), 1e-9);
    assertEquals(13.375, m.gbitPerSecond(), 0.01);
  }

  @Test
  void outputWithoutTheFiguresIsAClearError() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> Iperf3.parse("{\"error\": \"unable to connect to server\"}"));
    assertTrue(e.getMessage().contains("iperf3"), e.getMessage());
  }

  @Test
  void iperf3DashFSendsTheFileOverAndOverUntilTheTimeIsMeasured(@TempDir Path dir) throws Exception {
    assumeTrue(Iperf3.available(), "iperf3 is not installed");
    Path file = dir.resolve("f.bin");
    Files.write(file, new byte[8 << 20]);
    Measurement m = Iperf3.runFile(file, 2, 0.3);
    assertTrue(m.seconds() >= 0.3, "measured " + m.seconds() + " s");
    // Each run sends the file once (what arrives may fall a little short of it).
    assertTrue(m.bytes() >= (4 << 20) && m.cpuSeconds() > 0, m.toString());
  }

  @Test
  void sizes() {
    assertEquals(4096, Sizes.parse("4096"));
    assertEquals(64 << 20, Sizes.parse("64m"));
    assertEquals(4L << 30, Sizes.parse("4G"));
    for (String bad : new String[] {"", "0", "-1m", "12x", "m", "99999999999g"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse(bad));
      assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
    }
  }
}
