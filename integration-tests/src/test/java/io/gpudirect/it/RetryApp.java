package io.gpudirect.it;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The job {@link TaskRetryIT} submits: reads a gpudirect:// path with no retries inside
 * gpudirect, so a cut connection fails the task and Spark retries it; tags every row with the
 * attempt that produced it; compares the rows with Spark's own reader on the local copy.
 * Prints {@code rows=N equal=true|false maxAttempt=A}.
 */
public final class RetryApp {
  private RetryApp() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("gpudirect-retry-test").getOrCreate();
    Dataset<Row> remote = spark.read().format("gpudirect").option("streams", "1").option("maxRetries", "0")
        .option("chunkSize", "8k").load(args[0]);
    List<String> tagged = remote.mapPartitions((MapPartitionsFunction<Row, String>) rows -> {
      int attempt = TaskContext.get().attemptNumber();
      List<String> out = new ArrayList<>();
      rows.forEachRemaining(r -> out.add(attempt + "|" + r));
      return out.iterator();
    }, Encoders.STRING()).collectAsList();
    int maxAttempt = 0;
    List<String> got = new ArrayList<>();
    for (String t : tagged) {
      int bar = t.indexOf('|');
      maxAttempt = Math.max(maxAttempt, Integer.parseInt(t.substring(0, bar)));
      got.add(t.substring(bar + 1));
    }
    List<String> expected = new ArrayList<>();
    for (Row r : spark.read().parquet(args[1]).collectAsList()) {
      expected.add(r.toString());
    }
    Collections.sort(got);
    Collections.sort(expected);
    System.out.println("rows=" + got.size() + " equal=" + got.equals(expected) + " maxAttempt=" + maxAttempt);
    spark.stop();
  }
}
