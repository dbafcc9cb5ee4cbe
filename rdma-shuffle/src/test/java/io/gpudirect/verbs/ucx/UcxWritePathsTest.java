package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Both ways a WRITE travels over real UCX: as a frame on the endpoint's stream where a host has
 * no RDMA device (what runs here and in CI), and as a UCX put (what verbs would carry), here
 * UCX's software put over TCP, so that the put path keeps running without a NIC. No peer is
 * killed: with software puts that can abort this JVM (UcxVerbs' class comment).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxWritePathsTest {
  @RegisterExtension static final UcxLoopback loopback = UcxLoopback.serving(6 << 20, 41);

  @Test
  void withoutAnRdmaDeviceWritesGoOnTheStreamAndLandWhole() throws Exception {
    assumeTrue(UcxLibrary.rdmaDevices().isEmpty(), "this host has an RDMA device: UCX puts run here");
    UcxVerbs verbs = UcxVerbs.open();
    long putsBefore = verbs.writes().puts.sum();
    long streamBefore = verbs.writes().streamWrites.sum();
    readAndCheck(verbs);
    assertTrue(verbs.writes().streamWrites.sum() > streamBefore, "the WRITEs went on the stream");
    assertEquals(putsBefore, verbs.writes().puts.sum(), "no UCX put was issued");
  }

  @Test
  void softwarePutsLandWhole() throws Exception {
    UcxVerbs verbs = UcxVerbs.open().withSoftwarePuts();
    readAndCheck(verbs);
    assertTrue(verbs.writes().puts.sum() > 0, "the WRITEs were UCX puts");
    assertEquals(0, verbs.writes().streamWrites.sum(), "no WRITE went on the stream");
  }

  /** A read of 5 MiB at an odd offset (several chunks, a partial last one) lands byte for byte. */
  private static void readAndCheck(UcxVerbs verbs) throws Exception {
    try (UcxLoopback.Session s = loopback.connect(verbs, "gpudirect-client-ucx-writes")) {
      s.assertReads(1, 12345, 5 << 20);
    }
  }
}
