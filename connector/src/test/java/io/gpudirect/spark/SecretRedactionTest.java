package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpudirect.hadoop.FileSystemConf;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.ExplainMode;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.util.SerializableConfiguration;
import org.apache.spark.util.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.collection.JavaConverters;

/**
 * The shared secret reaches the executors that need it, and nothing a user, an operator or a
 * log reader sees shows it: not explain() in any mode, not the event log (what Spark's UI and
 * history server show), not the tasks' serialized reader factory or partitions. It travels
 * once, in the scan's broadcast Hadoop conf, under a key Spark's redaction hides.
 */
class SecretRedactionTest {
  private static final String SECRET = "s3cr3t-Value-long-enough-9f2c";
  private static final String SECRET_KEY = "spark.gpudirect.auth.secret";

  @TempDir
  static Path events;

  private static BlockServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = BlockServer.builder().root(TestData.root().resolve("parquet")).bindAddress("127.0.0.1").port(0)
        .secret(SECRET.getBytes(StandardCharsets.UTF_8)).build().start();
    spark = LocalSessions.builder("gpudirect-redaction", 2)
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.toUri().toString())
        // Spark 4 compresses event logs by default; the test reads the log as text.
        .config("spark.eventLog.compress", "false")
        // As spark-submit --conf sets it, for reads without the read option.
        .config(SECRET_KEY, SECRET)
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    LocalSessions.stop(spark, server);
  }

  @Test
  void theSecretGivenAsAReadOptionIsNeverShown() throws Exception {
    RemoteStores.closeAll();
    checkRead(spark.read().format("gpudirect").option("auth.secret", SECRET).load(uri()));
  }

  @Test
  void theSecretGivenInTheSparkConfIsNeverShown() throws Exception {
    RemoteStores.closeAll();
    checkRead(spark.read().format("gpudirect").load(uri()));
  }

  private static String uri() {
    return "gpudirect://127.0.0.1:" + server.port() + "/alltypes_plain.parquet";
  }

  private static void checkRead(Dataset<Row> df) throws Exception {
    // Executors authenticate: the secret got there.
    assertEquals(8, df.collectAsList().size());
    List<Executable> checks = new ArrayList<>();
    for (String mode : new String[] {"simple", "extended", "codegen", "cost", "formatted"}) {
      String explained = df.queryExecution().explainString(ExplainMode.fromString(mode));
      checks.add(() -> assertHidden(explained, "explain " + mode));
    }
    BatchScanExec scan = scan(df.queryExecution().executedPlan());
    checks.add(() -> assertHidden(scan.scan().description(), "the scan's description"));
    checks.add(() -> assertHidden(serialized(scan.readerFactory()), "the serialized reader factory"));
    for (InputPartition p : JavaConverters.seqAsJavaList(scan.inputPartitions())) {
      checks.add(() -> assertHidden(serialized(p), "a serialized input partition"));
    }
    Configuration broadcast = broadcastConf(scan);
    List<String> holders = new ArrayList<>();
    broadcast.forEach(e -> {
      if (e.getValue().contains(SECRET)) {
        holders.add(e.getKey());
      }
    });
    checks.add(() -> assertEquals(List.of(SECRET_KEY), holders,
        "the keys of the broadcast Hadoop conf that hold the secret"));
    // A local executor shares the driver's broadcast object; one in another JVM gets it serialized.
    checks.add(() -> assertEquals(SECRET, FileSystemConf.secret(roundTrip(broadcast)).reveal(),
        "the secret an executor in another JVM finds in the broadcast conf"));
    Tuple2<String, String> redacted = Utils.redact(spark.sparkContext().conf(),
        JavaConverters.asScalaBuffer(List.of(new Tuple2<>(SECRET_KEY, SECRET))).toSeq()).head();
    checks.add(() -> assertHidden(redacted._2(), "the value Spark's UI shows for " + SECRET_KEY));
    assertAll(checks);
  }

  /**
   * The event log is what Spark's UI and history server show. Left out, because Spark 3.5
   * itself writes it: a secret set at runtime with {@code spark.conf.set} becomes a job
   * property, and the event log redacts job properties only for keys of the SparkConf
   * (EventLoggingListener.redactProperties); docs/security.md says to set it at submit.
   */
  @Test
  void theEventLogNeverShowsTheSecret() throws Exception {
    theSecretGivenAsAReadOptionIsNeverShown();
    theSecretGivenInTheSparkConfIsNeverShown();
    spark.sparkContext().listenerBus().waitUntilEmpty();
    // The event log is flushed per event; it is what the UI and the history server show.
    StringBuilder log = new StringBuilder();
    try (Stream<Path> files = Files.walk(events)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        log.append(Files.readString(f));
      }
    }
    assertFalse(log.toString().isEmpty(), "an event log was written under " + events);
    assertHidden(log.toString(), "the event log");
  }

  private static BatchScanExec scan(SparkPlan plan) {
    for (SparkPlan leaf : JavaConverters.seqAsJavaList(plan.collectLeaves())) {
      if (leaf instanceof BatchScanExec b) {
        return b;
      }
    }
    throw new AssertionError("no BatchScanExec in " + plan);
  }

  @SuppressWarnings("unchecked")
  private static Configuration broadcastConf(BatchScanExec scan) throws ReflectiveOperationException {
    Field f = GpuDirectReaderFactory.class.getDeclaredField("conf");
    f.setAccessible(true);
    return ((Broadcast<SerializableConfiguration>) f.get(scan.readerFactory())).value().value();
  }

  private static Configuration roundTrip(Configuration conf) throws IOException, ClassNotFoundException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new SerializableConfiguration(conf));
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return ((SerializableConfiguration) in.readObject()).value();
    }
  }

  private static String serialized(Object o) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(o);
    }
    return bytes.toString(StandardCharsets.ISO_8859_1);
  }

  /** Fails naming where the secret showed, with what surrounds it (the secret itself masked). */
  private static void assertHidden(String text, String where) {
    int at = text.indexOf(SECRET);
    if (at >= 0) {
      String around = text.substring(Math.max(0, at - 300), Math.min(text.length(), at + SECRET.length() + 100));
      fail(where + " shows the secret: ..." + around.replace(SECRET, "<SECRET>") + "...");
    }
  }
}
