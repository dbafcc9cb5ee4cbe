package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spark-submit --jars gpudirect-connector-*-shaded.jar}: a child JVM runs Spark's own
 * SparkSubmit with a classpath that has Spark but none of gpudirect's classes, so the job can
 * only find the source through the shaded jar.
 */
class SparkSubmitIT {
  @TempDir
  Path tmp;

  @Test
  void shadedJarWorksWithSparkSubmit() throws Exception {
    Path shaded = Path.of(System.getProperty("gpudirect.shadedJar"));
    assertTrue(Files.isRegularFile(shaded), "the shaded jar is built by the connector module: " + shaded);
    Path appJar = appJar();

    try (ServerFixture fixture = ServerFixture.serve(LocalSpark.testdata())) {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(Arrays.asList(JvmFlags.FLAGS));
      command.add("-Xmx1g");
      command.add("-cp");
      command.add(sparkOnlyClasspath());
      command.add("org.apache.spark.deploy.SparkSubmit");
      command.addAll(List.of("--master", "local[1]", "--conf", "spark.ui.enabled=false",
          "--class", SubmitApp.class.getName(), "--jars", shaded.toString(), appJar.toString(),
          fixture.uri("parquet/alltypes_plain.parquet")));
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(3, TimeUnit.MINUTES), "spark-submit finished");
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("gpudirect rows=8"), out);
    }
  }

  /** A jar with just the job's class, as a user would submit. */
  private Path appJar() throws Exception {
    Path jar = tmp.resolve("app.jar");
    String entry = SubmitApp.class.getName().replace('.', '/') + ".class";
    try (OutputStream os = Files.newOutputStream(jar); JarOutputStream jos = new JarOutputStream(os)) {
      jos.putNextEntry(new JarEntry(entry));
      jos.write(SubmitApp.class.getClassLoader().getResourceAsStream(entry).readAllBytes());
      jos.closeEntry();
    }
    return jar;
  }

  /** This JVM's classpath without any gpudirect module or test classes. */
  private static String sparkOnlyClasspath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !e.contains("gpudirect-") && !e.contains("/target/classes") && !e.contains("/target/test-classes")
            && !e.contains("picocli"))
        .collect(Collectors.joining(File.pathSeparator));
  }
}
