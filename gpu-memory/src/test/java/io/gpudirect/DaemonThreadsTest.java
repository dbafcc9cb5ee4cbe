package io.gpudirect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
  private static final Runnable NOTHING = () -> { };

  @Test
  void namedMakesDaemonsAllOfTheOneName() {
    ThreadFactory factory = DaemonThreads.named("gpudirect-test-timer");
    for (int i = 0; i < 2; i++) {
      Thread t = factory.newThread(NOTHING);
      assertTrue(t.isDaemon(), "a daemon, so that it never holds the JVM open");
      assertEquals("gpudirect-test-timer", t.getName());
    }
  }

  @Test
  void numberedMakesDaemonsCountingFromOnePerFactory() {
    ThreadFactory first = DaemonThreads.numbered("gpudirect-test-worker");
    ThreadFactory second = DaemonThreads.numbered("gpudirect-test-worker");
    Thread a = first.newThread(NOTHING);
    Thread b = first.newThread(NOTHING);
    Thread c = second.newThread(NOTHING);
    assertTrue(a.isDaemon() && b.isDaemon() && c.isDaemon(), "daemons, so that they never hold the JVM open");
    assertEquals("gpudirect-test-worker-1", a.getName());
    assertEquals("gpudirect-test-worker-2", b.getName());
    assertEquals("gpudirect-test-worker-1", c.getName(), "each factory counts on its own");
  }
}
