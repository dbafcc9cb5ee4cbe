package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The shaded connector jar holds only what executors run: the command line and the host check
 * are in the server package (server/), the demo and bench in the benchmarks module. The block
 * server's core is in it, since each executor serves its own map outputs to the shuffle
 * manager's reducers (docs/shuffle.md). SparkSubmitIT proves the jar is enough for a read.
 */
class ShadedJarContentsIT {
  /** Class-file folders no executor loads. */
  private static final List<String> NOT_FOR_EXECUTORS = List.of(
      "io/gpudirect/cli/", "io/gpudirect/doctor/", "io/gpudirect/demo/",
      "io/gpudirect/bench/", "picocli/", "io/gpudirect/shaded/picocli/");

  @Test
  void holdsNoCommandLineOrDoctorClasses() throws IOException {
    try (JarFile jar = new JarFile(SparkSubmitProcess.shadedJar().toFile())) {
      List<String> misplaced = jar.stream().map(JarEntry::getName)
          .filter(name -> NOT_FOR_EXECUTORS.stream().anyMatch(name::startsWith))
          .toList();
      assertEquals(List.of(), misplaced, "classes in " + jar.getName() + " that executors never run");
    }
  }

  /** The check above means something only if the jar holds the reader; its entry points are there. */
  @Test
  void holdsTheClassesItsServiceFilesName() throws IOException {
    try (JarFile jar = new JarFile(SparkSubmitProcess.shadedJar().toFile())) {
      // The last two: executors read their settings from the SparkConf, and scans their RAPIDS note, through these.
      for (String service : List.of("org.apache.spark.sql.sources.DataSourceRegister",
          "org.apache.hadoop.fs.FileSystem", "io.gpudirect.options.RunningSparkConf", "io.gpudirect.spark.DeviceEngine")) {
        JarEntry entry = jar.getJarEntry("META-INF/services/" + service);
        assertNotNull(entry, service + " in " + jar.getName());
        String text;
        try (InputStream in = jar.getInputStream(entry)) {
          text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        text.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).forEach(className ->
            assertNotNull(jar.getJarEntry(className.replace('.', '/') + ".class"), className + " in " + jar.getName()));
      }
      assertNotNull(jar.getJarEntry("io/gpudirect/client/BlockClient.class"), "the block client in " + jar.getName());
      // Executors serve their map outputs: the shuffle manager and its server's launcher.
      for (String shuffle : List.of("io/gpudirect/spark/shuffle/GpuDirectShuffleManager.class",
          "io/gpudirect/shuffle/server/ExecutorShuffleServer.class", "io/gpudirect/server/BlockServer.class")) {
        assertNotNull(jar.getJarEntry(shuffle), shuffle + " in " + jar.getName());
      }
      assertTrue(jar.stream().anyMatch(e -> e.getName().startsWith("io/gpudirect/protocol/")),
          "the protocol in " + jar.getName());
    }
  }

  /** Each third-party artifact shaded in (by its META-INF/maven) is named in NOTICE with its license. */
  @Test
  void noticeNamesEveryThirdPartyArtifactItHolds() throws IOException {
    try (JarFile jar = new JarFile(SparkSubmitProcess.shadedJar().toFile())) {
      BundledArtifacts.assertNoticeNamesAll(jar.getName(), BundledArtifacts.inJar(jar));
    }
  }
}
