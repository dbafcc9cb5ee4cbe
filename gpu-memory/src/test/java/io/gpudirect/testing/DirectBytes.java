package io.gpudirect.testing;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/** The direct memory this JVM holds, as the JDK counts it: freed memory leaves it at once. */
public final class DirectBytes {
  private DirectBytes() {}

  /** Bytes of direct memory in use now. */
  public static long used() {
    return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
        .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
  }
}
