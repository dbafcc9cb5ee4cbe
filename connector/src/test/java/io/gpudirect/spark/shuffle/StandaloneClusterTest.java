package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster's daemons without an application: each Worker in a JVM of its own, with its own
 * folders; a Worker that cannot start fails the start naming its log and quoting it, and takes
 * the Master and the other Worker down with it; closing leaves no JVM behind.
 */
@org.junit.jupiter.api.Tag("spark35-line")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StandaloneClusterTest {
  @TempDir Path tmp;

  @Test
  void theDaemonsRunInJvmsOfTheirOwnAndGoWhenClosed() throws Exception {
    List<ProcessHandle> daemons;
    try (StandaloneCluster cluster = StandaloneCluster.builder(tmp).workers(2).start()) {
      assertTrue(cluster.masterUrl().matches("spark://127\\.0\\.0\\.1:\\d+"), cluster.masterUrl());
      daemons = daemonJvms();
      assertEquals(3, daemons.size(), "a Master and two Workers, each a JVM of this one's: " + daemons);
      for (Path local : cluster.workerLocalDirs()) {
        assertTrue(Files.isDirectory(local), local + " is a Worker's own local directory");
      }
      assertTrue(Files.readString(tmp.resolve("worker-1.log")).contains("Successfully registered with master"));
    }
    for (ProcessHandle d : daemons) {
      assertTrue(!d.isAlive(), "daemon " + d.pid() + " still runs after close");
    }
    assertEquals(List.of(), daemonJvms(), "JVMs left behind");
  }

  @Test
  void aWorkerThatCannotStartIsNamedWithItsLogAndNothingIsLeftRunning() {
    // A command prefix that fails as `ip netns exec` does without the namespace.
    StandaloneCluster.Builder builder = StandaloneCluster.builder(tmp).workers(2)
        .placeWorker(1, "127.0.0.1", List.of("sh", "-c", "echo 'Cannot open network namespace \"gd-gone\"' >&2; exit 3"));
    IllegalStateException e = assertThrows(IllegalStateException.class, builder::start);
    String message = e.getMessage();
    assertTrue(message.startsWith("Worker 1 did not log") && message.contains("exited with 3")
        && message.contains(tmp.resolve("worker-1.log").toString())
        && message.contains("Cannot open network namespace \"gd-gone\""), message);
    assertEquals(List.of(), daemonJvms(), "JVMs left behind");
  }

  /** This JVM's children that run a Spark Master or Worker. */
  private static List<ProcessHandle> daemonJvms() {
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
        .filter(p -> StandaloneCluster.commandLine(p).contains("org.apache.spark.deploy.")).toList();
  }
}
