package io.gpudirect.spark;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * The local Spark every connector test starts from: {@code cores} executor threads in this
 * JVM, no web UI, the driver on loopback (as the test servers are). Each test adds its own
 * settings before {@code getOrCreate()}.
 */
public final class LocalSessions {
  private LocalSessions() {}

  public static SparkSession.Builder builder(String appName, int cores) {
    return SparkSession.builder()
        .appName(appName)
        .master("local[" + cores + "]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1");
  }

  /**
   * Serves the Parquet folders {@code tables} under {@code root} from a server on loopback and
   * registers each twice in {@code spark}: {@code local_T} read by {@code spark.read.parquet},
   * {@code remote_T} by gpudirect from that server, so that a test compares the two plans or rows
   * of one query. Returns the server, for {@link #stop}.
   */
  public static BlockServer serveAsViews(SparkSession spark, Path root, String... tables) {
    BlockServer server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).build().start();
    for (String t : tables) {
      spark.read().parquet(root.resolve(t).toString()).createOrReplaceTempView("local_" + t);
      spark.read().format("gpudirect").load("gpudirect://127.0.0.1:" + server.port() + "/" + t)
          .createOrReplaceTempView("remote_" + t);
    }
    return server;
  }

  /**
   * Ends a test class's session and server in the order that leaves nothing behind: Spark's
   * tasks first, then the client stores they used (pooled connections to the server), then the
   * server. Either may be null, where the set-up failed part-way.
   */
  public static void stop(SparkSession spark, BlockServer server) {
    if (spark != null) {
      spark.stop();
    }
    RemoteStores.closeAll();
    if (server != null) {
      server.close();
    }
  }
}
