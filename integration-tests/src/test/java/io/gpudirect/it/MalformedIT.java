package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Corrupt and fuzzer-found files end within seconds: in an error that names the file, or,
 * where the file is in fact readable, in exactly the rows a reference reader gives. Either
 * way the server goes on serving.
 */
class MalformedIT {
  private static ServerFixture fixture;

  @BeforeAll
  static void start() {
    fixture = ServerFixture.serve(LocalSpark.testdata());
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  static Stream<String> files() throws IOException {
    return LocalSpark.testdataFiles("malformed", n -> !n.endsWith(".md"));
  }


  @ParameterizedTest
  @MethodSource("files")
  void failsClearlyOrReadsCorrectly(String name) {
    SparkSession spark = LocalSpark.get();
    String uri = fixture.uri("malformed/" + name);
    Throwable failure = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      try {
        List<Row> rows = spark.read().format("gpudirect").load(uri).collectAsList();
        if (name.endsWith(".parquet")) {
          String local = LocalSpark.testdata().resolve("malformed").resolve(name).toString();
          assertEquals(spark.read().parquet(local).collectAsList(), rows, "rows of readable " + name);
        }
        return null;
      } catch (Exception e) {
        return e;
      }
    }, "reading " + name + " took too long");
    if (failure != null) {
      assertTrue(messages(failure).contains(name), "error must name " + name + " but was: " + messages(failure));
      assertFalse(failure instanceof OutOfMemoryError);
    }
    // The server keeps serving the next request.
    assertEquals(1, spark.read().format("gpudirect")
        .load(fixture.uri("parquet/alltypes_plain.parquet")).limit(1).collectAsList().size());
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" | ");
    }
    return sb.toString();
  }
}
