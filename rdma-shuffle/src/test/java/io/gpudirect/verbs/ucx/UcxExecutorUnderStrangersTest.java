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
 * count of workers is what fails at once).
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
      Thread.sleep(2_000);
      assertTrue(readsSoFar(executor) > reads, "the executor reads on after the flood; " + executor.describe());
      // A read may fail for want of direct memory (connections' memory is left to the JVM's
      // collector, docs/security.md), never with wrong bytes.
      assertFalse(executor.output().contains("read failed: wrong bytes"), executor.describe());
      assertTrue(strangers >= 1_000, "strangers that connected: " + strangers);
    }
  }

  private static long readsSoFar(ChildProcess executor) {
    long reads = 0;
    for (String line : executor.output().split("\n")) {
      if (line.startsWith("reads ")) {
        reads = Long.parseLong(line.substring(6).trim());
      }
    }
    return reads;
  }
}
