package io.gpudirect.verbs.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpudirect.verbs.RdmaUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** What {@code auto} says when neither provider can run here (this host, for real). */
class RdmaProviderTest {
  /** Both providers miss the same device: the one line a TCP fallback logs says so once. */
  @Test
  void withoutAnRdmaDeviceAutoSaysSoOnce() throws IOException {
    Path devices = Path.of("/sys/class/infiniband");
    if (Files.isDirectory(devices)) {
      try (Stream<Path> s = Files.list(devices)) {
        assumeTrue(s.findAny().isEmpty(), "this host has an RDMA device");
      }
    }
    RdmaUnavailableException e = assertThrows(RdmaUnavailableException.class, () -> RdmaProvider.AUTO.open(true));
    assertEquals(1, e.summary().split("no RDMA device", -1).length - 1, e.summary());
  }
}
