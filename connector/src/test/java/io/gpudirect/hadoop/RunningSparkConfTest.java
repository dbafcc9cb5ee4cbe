package io.gpudirect.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.LocalSessions;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gpudirect:// file system takes what its Hadoop conf lacks from the running Spark's conf,
 * as on an executor, where {@code --conf spark.gpudirect.X} reaches the SparkConf but not the
 * Hadoop conf of Spark's readers.
 */
class RunningSparkConfTest {
  private static final URI SERVER = URI.create("gpudirect://127.0.0.1:1/");
  private static final String SECRET_KEY = "spark.gpudirect.auth.secret";
  private SparkSession spark;

  private BlockServer server;

  @AfterEach
  void stop() {
    LocalSessions.stop(spark, server);
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

  /**
   * A secret given at launch and unset in the session is unset for Spark's own readers too, as
   * for {@code format("gpudirect")}: the Hadoop conf a session makes carries its whole conf, so
   * what it lacks the session has unset. The RDD API's Hadoop conf carries no session's: there
   * the launch setting still serves.
   */
  @Test
  void aLaunchSettingUnsetInTheSessionIsUnsetForSparksReadersToo(@TempDir Path root) throws IOException {
    String secret = "a launch secret, long enough";
    spark = LocalSessions.builder("running-spark-conf", 1).config(SECRET_KEY, secret).getOrCreate();
    spark.range(10).write().parquet(root.resolve("t").toString());
    server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0)
        .secret(secret.getBytes(StandardCharsets.UTF_8)).build().start();
    String uri = "gpudirect://127.0.0.1:" + server.port() + "/t";
    assertEquals(10, spark.read().parquet(uri).count());

    spark.conf().unset(SECRET_KEY);
    for (Executable read : new Executable[] {() -> spark.read().format("gpudirect").load(uri).count(),
        () -> spark.read().parquet(uri).count()}) {
      Exception e = assertThrows(Exception.class, read);
      assertTrue(e.toString().contains("requires a secret"), e.toString());
    }
    try (FileSystem fs = FileSystem.newInstance(URI.create(uri), spark.sparkContext().hadoopConfiguration())) {
      assertTrue(fs.getFileStatus(new org.apache.hadoop.fs.Path(uri)).isDirectory());
    }
  }
}
