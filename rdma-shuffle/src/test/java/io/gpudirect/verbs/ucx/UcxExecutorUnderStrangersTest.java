package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.ChildProcess;
import io.gpudirect.testing.QueuePairOffer;
import io.gpudirect.testing.TestFiles;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An executor serves and reads over UCX in one JVM; strangers flood its RDMA port meanwhile.
 * With a worker for the listener and one for the client, UCX before 1.18 aborted such a process
 * (async.c:643 {@code handler->async == async}) after 30,000 strangers' connections, in under
 * 75 s: an event set aside for a dropped stranger's socket reached the client worker's socket
 * that took its number. One worker per context leaves nothing to cross. The flood lasts
 * {@code gpudirect.test.strangerSeconds} (10 s in CI, where it cannot tell on its own: the
 * count of workers is what fails at once). Meanwhile no read may fail, and the memory of the
 * executor's queue pairs must be freed as they close (SessionMemory), not pile up for the collector.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class UcxExecutorUnderStrangersTest {
  private static final byte[] SECRET = "the secret of UcxExecutorUnderStrangersTest".getBytes();

  @TempDir Path root;

  @Test
  void anExecutorThatServesAndReadsOverUcxOnOneWorkerSurvivesStrangers() throws Exception {
    RdmaOverUcxConformanceTest.needsUcx();
    Path files = Files.createDirectory(root.resolve("files"));
    TestFiles.write(files.resolve("d.bin"), 256 << 10, 5);
    Path secret = root.resolve("secret");
    Files.write(secret, SECRET);
    try (ChildProcess executor = ChildJvm.start(UcxExecutorProcess.class, files.toString(), secret.toString(), "d.bin")) {
      int port = Integer.parseInt(executor.awaitLine("port ", Duration.ofSeconds(60)).substring(5).trim());
      assertEquals("workers 1", executor.awaitLine("workers ", Duration.ofSeconds(60)).trim(),
          "UCX workers open in a JVM that serves and reads; " + executor.describe());
      int rdmaPort;
      try (QueuePairOffer o = QueuePairOffer.take(port, SECRET)) {
        rdmaPort = o.rdmaPort();
      }
      long end = System.nanoTime() + Duration.ofSeconds(Long.getLong("gpudirect.test.strangerSeconds", 10)).toNanos();
      long strangers = HostileUcxClient.flood(new InetSocketAddress("127.0.0.1", rdmaPort),
          () -> System.nanoTime() < end && executor.isAlive());
      assertTrue(executor.isAlive(), "after " + strangers + " strangers: " + executor.describe());
      long reads = readsSoFar(executor);
      // 50 more reads print a line: a second or two here, longer on a busy machine.
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (readsSoFar(executor) <= reads && executor.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(200);
      }
      assertTrue(readsSoFar(executor) > reads, "the executor reads on after the flood; " + executor.describe());
      assertFalse(executor.output().contains("read failed"), executor.describe());
      assertTrue(strangers >= 1_000, "strangers that connected: " + strangers);
      // Each queue pair's 8.5 MiB left to the collector held the child's whole 1 GiB of direct
      // memory within seconds, and reads failed for want of it; the client's control slots
      // (528 KiB a connection) left to it held 61 MiB in 10 s and 114 in 25 s, against 19 and 25
      // freed once UCX released them.
      long direct = column(executor, 3).max().orElseThrow();
      assertTrue(direct < 48, "MiB of direct memory held at most: " + direct + "; " + executor.describe());
    }
  }

  private static long readsSoFar(ChildProcess executor) {
    return column(executor, 1).max().orElse(0);
  }

  /** Column {@code i} (0-based, by spaces) of the executor's {@code reads N direct M} lines. */
  private static java.util.stream.LongStream column(ChildProcess executor, int i) {
    return java.util.Arrays.stream(executor.output().split("\n")).map(String::trim)
        .filter(l -> l.startsWith("reads ")).mapToLong(l -> Long.parseLong(l.split(" ")[i]));
  }
}
