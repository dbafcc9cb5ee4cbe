package io.gpudirect.hadoop;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.spark.LocalSessions;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gpudirect:// file system takes what its Hadoop conf lacks from the running Spark's conf,
 * as on an executor, where {@code --conf spark.gpudirect.X} reaches the SparkConf but not the
 * Hadoop conf of Spark's readers.
 */
class RunningSparkConfTest {
  private static final URI SERVER = URI.create("gpudirect://127.0.0.1:1/");
  private SparkSession spark;

  @AfterEach
  void stop() {
    LocalSessions.stop(spark, null);
  }

  @Test
  void aSettingOnlyInTheSparkConfIsRead() {
    spark = LocalSessions.builder("running-spark-conf", 1).config("spark.gpudirect.maxRetries", "lots").getOrCreate();
    String message = assertThrows(IOException.class, () -> FileSystem.newInstance(SERVER, new Configuration())).getMessage();
    assertTrue(message.contains("Invalid value 'lots' for option maxRetries (session key spark.gpudirect.maxRetries)"),
        message);
  }

  @Test
  void withoutSparkNothingIsFound() throws IOException {
    FileSystem.newInstance(SERVER, new Configuration()).close();
  }
}
