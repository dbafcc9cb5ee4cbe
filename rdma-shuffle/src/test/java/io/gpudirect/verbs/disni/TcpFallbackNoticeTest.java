package io.gpudirect.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.TcpFallbackNotice;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one line a host without RDMA logs, and the details it leaves to doctor and transport=rdma. */
class TcpFallbackNoticeTest {
  @TempDir
  Path noDevices;

  @Test
  void aHostWithoutRdmaDevicesSaysSoInOneShortLine() {
    RdmaUnavailableException why = DisniLibrary.probe(noDevices);
    assertNotNull(why, "an empty sysfs has no RDMA device");
    assertEquals("transport: TCP (no RDMA device; see gpudirect doctor)", TcpFallbackNotice.line(why));
    // The recipe stays with the exception, for transport=rdma and --rdma on.
    assertTrue(why.getMessage().contains(why.remedy()) && why.remedy().contains("docs/deployment.md"), why.getMessage());
  }

  @Test
  void aSummaryDefaultsToTheReason() {
    RdmaUnavailableException why = new RdmaUnavailableException("server x does not serve RDMA", null, null);
    assertEquals("transport: TCP (server x does not serve RDMA; see gpudirect doctor)", TcpFallbackNotice.line(why));
  }
}
