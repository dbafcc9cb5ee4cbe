package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.FileChanges;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Iterator;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A Parquet file that changes under a Spark scan: the task that reads it after the change
 * fails, saying which file changed, whether the change came between planning and reading or
 * between two partitions of the read; never rows of a file the plan did not list.
 */
class FileChangeIT {
  @TempDir
  static Path tmp;
  private static Path root;
  private static ServerFixture fixture;
  /** A Parquet file of many small row groups, and another with other values. */
  private static Path original;
  private static Path other;

  @BeforeAll
  static void start() throws IOException {
    SparkSession spark = LocalSpark.get();
    spark.range(0, 300_000, 1, 1).selectExpr("id", "cast(id * 2.5 AS double) AS d")
        .write().option("parquet.block.size", 128 * 1024).parquet(tmp.resolve("a").toString());
    spark.range(0, 300_000, 1, 1).selectExpr("id + 7 AS id", "cast(id * 3.5 AS double) AS d")
        .write().option("parquet.block.size", 128 * 1024).parquet(tmp.resolve("b").toString());
    original = partFile(tmp.resolve("a"));
    other = partFile(tmp.resolve("b"));
    root = Files.createDirectories(tmp.resolve("root"));
    fixture = ServerFixture.serve(root);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  /** The file replaced by another Parquet file after the scan was planned, before it runs. */
  @Test
  void aFileRewrittenAfterPlanningFailsTheQueryNamingIt() throws IOException {
    Path file = place("planned.parquet");
    Dataset<Row> df = LocalSpark.get().read().format("gpudirect").load(fixture.uri("planned.parquet"));
    assertEquals(300_000, df.count(), "unchanged, it reads");
    Path replacement = root.resolve("planned.parquet.new");
    Files.copy(other, replacement);
    Files.move(replacement, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

    Exception e = assertThrows(Exception.class, () -> df.selectExpr("sum(id)").collectAsList());
    assertChanged(e, "planned.parquet");
  }

  /**
   * The first partition read, the file changed, the rest read: {@code toLocalIterator} runs
   * one partition's job at a time, as it is consumed, so the change falls between two.
   */
  @ParameterizedTest
  @EnumSource(FileChanges.class)
  void aFileChangedBetweenPartitionsFailsTheNextTaskNamingIt(FileChanges change) throws IOException {
    String name = "live-" + change + ".parquet";
    Path file = place(name);
    Dataset<Row> df = LocalSpark.get().read().format("gpudirect").option("maxPartitionBytes", "256k")
        .load(fixture.uri(name));
    assertTrue(df.rdd().getNumPartitions() > 2, "the read is cut into partitions");
    Iterator<Row> rows = df.toLocalIterator();
    assertTrue(rows.hasNext());
    rows.next();

    change.apply(file, 31);

    Exception e = assertThrows(Exception.class, () -> {
      while (rows.hasNext()) {
        rows.next();
      }
    });
    assertChanged(e, name);
  }

  /** {@code original} copied to {@code name} under the root, as a file that was there before the job. */
  private static Path place(String name) throws IOException {
    Path file = root.resolve(name);
    Files.copy(original, file, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(60)));
    return file;
  }

  private static void assertChanged(Exception e, String name) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t).append('\n');
    }
    assertTrue(all.indexOf(name) >= 0 && all.indexOf("changed since") >= 0, all.toString());
  }

  private static Path partFile(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
  }
}
