package io.gpudirect.server.rdma;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/** The JVM's limit on direct buffers: -XX:MaxDirectMemorySize, or the heap's maximum without it. */
final class DirectMemory {
  private DirectMemory() {}

  static long max() {
    try {
      long set = Long.parseLong(ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
          .getVMOption("MaxDirectMemorySize").getValue());
      if (set > 0) {
        return set;
      }
    } catch (RuntimeException e) {
      // not a HotSpot JVM: the heap's maximum is what HotSpot would default to
    }
    return Runtime.getRuntime().maxMemory();
  }
}
