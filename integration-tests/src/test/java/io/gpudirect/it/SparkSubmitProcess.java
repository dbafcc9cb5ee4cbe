package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.SparkJvmFlags;
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

/**
 * Spark's own {@code SparkSubmit} in a child JVM whose classpath has Spark but none of
 * gpudirect's classes, so a job can only find gpudirect through the shaded jar given with
 * {@code --jars}.
 */
final class SparkSubmitProcess {
  private SparkSubmitProcess() {}

  static Path shadedJar() {
    Path shaded = Path.of(System.getProperty("gpudirect.shadedJar"));
    assertTrue(Files.isRegularFile(shaded), "the shaded jar is built by the connector module: " + shaded);
    return shaded;
  }

  /**
   * Submits {@code app} (packed alone into a jar in {@code tmp}, as a user would) with the
   * shaded jar, and returns its output once it exited with {@code expectedExit}.
   */
  static String submit(Path tmp, Class<?> app, List<String> conf, int expectedExit, String... args) throws Exception {
    return submit(tmp, app, "local[1]", conf, expectedExit, args);
  }

  /** The same, with Spark's {@code --master} (e.g. {@code local[1,3]}: one thread, three attempts per task). */
  static String submit(Path tmp, Class<?> app, String master, List<String> conf, int expectedExit, String... args)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(SparkJvmFlags.FLAGS);
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(sparkOnlyClasspath());
    command.add("org.apache.spark.deploy.SparkSubmit");
    command.addAll(List.of("--master", master, "--conf", "spark.ui.enabled=false"));
    command.addAll(conf);
    command.addAll(List.of("--class", app.getName(), "--jars", shadedJar().toString(), appJar(tmp, app).toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(3, TimeUnit.MINUTES), "spark-submit finished");
    assertEquals(expectedExit, p.exitValue(), out);
    return out;
  }

  private static Path appJar(Path tmp, Class<?> app) throws Exception {
    Path jar = tmp.resolve(app.getSimpleName() + ".jar");
    String entry = app.getName().replace('.', '/') + ".class";
    try (OutputStream os = Files.newOutputStream(jar); JarOutputStream jos = new JarOutputStream(os)) {
      jos.putNextEntry(new JarEntry(entry));
      jos.write(app.getClassLoader().getResourceAsStream(entry).readAllBytes());
      jos.closeEntry();
    }
    return jar;
  }

  /** This JVM's classpath without any gpudirect module or test classes. */
  private static String sparkOnlyClasspath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !e.contains("gpudirect-") && !e.contains("/target/classes") && !e.contains("/target/test-classes")
            && !e.contains("picocli") && !e.contains("jcuda"))
        .collect(Collectors.joining(File.pathSeparator));
  }
}
