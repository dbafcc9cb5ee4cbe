package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spark-submit --jars gpudirect-connector-*-shaded.jar} with
 * {@code spark.read.format("gpudirect")}, in a child JVM that can only find gpudirect in that jar.
 */
class SparkSubmitIT {
  @TempDir
  Path tmp;

  @Test
  void shadedJarWorksWithSparkSubmit() throws Exception {
    try (ServerFixture fixture = ServerFixture.serve(LocalSpark.testdata())) {
      String out = SparkSubmitProcess.submit(tmp, SubmitApp.class, List.of(), 0,
          fixture.uri("parquet/alltypes_plain.parquet"));
      assertTrue(out.contains("gpudirect rows=8"), out);
    }
  }
}
