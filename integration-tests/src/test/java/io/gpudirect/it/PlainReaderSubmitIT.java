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
 * {@code spark-submit --jars gpudirect-connector-*-shaded.jar} and then plain
 * {@code spark.read.parquet("gpudirect://...")}. Hadoop reads {@code META-INF/services} once,
 * before spark-submit adds {@code --jars} to the class loader, so the file system must be
 * named with {@code spark.hadoop.fs.gpudirect.impl}; docs/quickstart.md says so, and this test
 * notices if a Spark or Hadoop version makes that unnecessary.
 */
class PlainReaderSubmitIT {
  @TempDir
  Path tmp;

  @Test
  void plainReadersFindTheFileSystemFromTheShadedJar() throws Exception {
    Path shaded = Path.of(System.getProperty("gpudirect.shadedJar"));
    assertTrue(Files.isRegularFile(shaded), "the shaded jar is built by the connector module: " + shaded);
    Path csv = Files.createDirectories(tmp.resolve("data/csv"));
    Files.writeString(csv.resolve("a.csv"), "x,y\n1,a\n2,b\n3,c\n");
    try (ServerFixture fixture = ServerFixture.serve(LocalSpark.testdata())) {
      try (ServerFixture csvServer = ServerFixture.serve(tmp.resolve("data"))) {
        String parquet = fixture.uri("parquet/alltypes_plain.parquet");
        String csvGlob = csvServer.uri("csv/*.csv");
        String out = submit(shaded, 0, List.of("--conf", "spark.hadoop.fs.gpudirect.impl=io.gpudirect.hadoop.GpuDirectFileSystem"),
            parquet, csvGlob);
        assertTrue(out.contains("plain parquet rows=8 csv rows=3"), out);
        String without = submit(shaded, 1, List.of(), parquet, csvGlob);
        assertTrue(without.contains("No FileSystem for scheme \"gpudirect\""), without);
      }
    }
  }

  private String submit(Path shaded, int expectedExit, List<String> conf, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(Arrays.asList(JvmFlags.FLAGS));
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(sparkOnlyClasspath());
    command.add("org.apache.spark.deploy.SparkSubmit");
    command.addAll(List.of("--master", "local[1]", "--conf", "spark.ui.enabled=false"));
    command.addAll(conf);
    command.addAll(List.of("--class", PlainReaderSubmitApp.class.getName(), "--jars", shaded.toString(), appJar().toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(3, TimeUnit.MINUTES), "spark-submit finished");
    assertEquals(expectedExit, p.exitValue(), out);
    return out;
  }

  private Path appJar() throws Exception {
    Path jar = tmp.resolve("app.jar");
    String entry = PlainReaderSubmitApp.class.getName().replace('.', '/') + ".class";
    try (OutputStream os = Files.newOutputStream(jar); JarOutputStream jos = new JarOutputStream(os)) {
      jos.putNextEntry(new JarEntry(entry));
      jos.write(PlainReaderSubmitApp.class.getClassLoader().getResourceAsStream(entry).readAllBytes());
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
