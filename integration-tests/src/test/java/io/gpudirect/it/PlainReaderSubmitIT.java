package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    Path csv = Files.createDirectories(tmp.resolve("data/csv"));
    Files.writeString(csv.resolve("a.csv"), "x,y\n1,a\n2,b\n3,c\n");
    try (ServerFixture fixture = ServerFixture.serve(LocalSpark.testdata())) {
      try (ServerFixture csvServer = ServerFixture.serve(tmp.resolve("data"))) {
        String parquet = fixture.uri("parquet/alltypes_plain.parquet");
        String csvGlob = csvServer.uri("csv/*.csv");
        String out = SparkSubmitProcess.submit(tmp, PlainReaderSubmitApp.class,
            List.of("--conf", "spark.hadoop.fs.gpudirect.impl=io.gpudirect.hadoop.GpuDirectFileSystem"), 0, parquet, csvGlob);
        assertTrue(out.contains("plain parquet rows=8 csv rows=3"), out);
        String without = SparkSubmitProcess.submit(tmp, PlainReaderSubmitApp.class, List.of(), 1, parquet, csvGlob);
        assertTrue(without.contains("No FileSystem for scheme \"gpudirect\""), without);
      }
    }
  }
}
