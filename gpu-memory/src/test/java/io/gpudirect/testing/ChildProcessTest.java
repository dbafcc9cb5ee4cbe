package io.gpudirect.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChildProcessTest {
  private static ChildProcess sh(String script) {
    return ChildProcess.start("sh", new ProcessBuilder("sh", "-c", script));
  }

  @Test
  void aLineIsFoundWhereverItComesAndStderrIsKeptWithStdout() throws Exception {
    try (ChildProcess p = sh("echo starting >&2; sleep 0.2; echo port 4242; sleep 30")) {
      assertEquals("port 4242", p.awaitLine("port ", Duration.ofSeconds(20)));
      assertTrue(p.output().startsWith("starting\n"), p.output());
      assertTrue(p.stop(Duration.ofSeconds(10)), "sh stops on SIGTERM");
    }
  }

  /** A child that ends without the line fails the wait at once, with its exit code and output, not at the bound. */
  @Test
  void aChildThatEndsWithoutTheLineFailsTheWaitAtOnce() throws Exception {
    try (ChildProcess p = sh("echo no such luck; exit 3")) {
      long start = System.nanoTime();
      AssertionError e = assertThrows(AssertionError.class, () -> p.awaitLine("port ", Duration.ofSeconds(50)));
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "waited for the bound");
      assertTrue(e.getMessage().contains("exited with 3") && e.getMessage().contains("no such luck"), e.getMessage());
      assertEquals(3, p.awaitExit(Duration.ofSeconds(10)));
    }
  }

  @Test
  void aLineThatNeverComesFailsAtTheBound() throws Exception {
    try (ChildProcess p = sh("sleep 30")) {
      AssertionError e = assertThrows(AssertionError.class, () -> p.awaitLine("port ", Duration.ofMillis(300)));
      assertTrue(e.getMessage().contains("sh running"), e.getMessage());
    }
  }
}
