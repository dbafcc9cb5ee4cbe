package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.tls.TlsContexts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark reads from a server that speaks TLS only, with a certificate made at test time and
 * the shared secret on top: the same rows as Spark's own Parquet reader, and one clear error
 * for each way of getting TLS wrong.
 */
class TlsIT {
  private static final String SECRET = "tls-it-secret-long-enough";
  @TempDir
  static Path root;
  @TempDir
  static Path keys;
  private static TestCertificates cert;
  private static TestCertificates stranger;
  private static BlockServer server;
  private static List<Row> expected;

  @BeforeAll
  static void start() throws Exception {
    SparkSession spark = LocalSpark.get();
    spark.range(0, 30_000).selectExpr("id", "id % 97 AS k", "sha2(CAST(id AS STRING), 256) AS h")
        .repartition(2).write().parquet(root.resolve("data").toString());
    expected = spark.read().parquet(root.resolve("data").toString()).orderBy("id").collectAsList();
    cert = TestCertificates.create(keys, "server");
    stranger = TestCertificates.create(keys, "stranger");
    server = BlockServer.builder().root(root).port(0).secret(SECRET.getBytes(StandardCharsets.UTF_8))
        .tls(TlsContexts.server(cert.certificate(), cert.privateKey())).build().start();
  }

  @AfterAll
  static void stop() {
    RemoteStores.closeAll();
    server.close();
  }

  @AfterEach
  void forget() {
    RemoteStores.closeAll();
  }

  private DataFrameReader reader() {
    return LocalSpark.get().read().format("gpudirect").option("auth.secret", SECRET)
        .option("chunkSize", "256k").option("maxRetries", "1").option("connectTimeout", "5s");
  }

  private String uri() {
    return "gpudirect://127.0.0.1:" + server.port() + "/data";
  }

  @Test
  void sparkReadsTheSameRowsOverTls() {
    List<Row> rows = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> reader()
        .option("tls", "true").option("tls.trustStore", cert.certificate().toString())
        .load(uri()).orderBy("id").collectAsList());
    assertEquals(expected, rows);
  }

  @Test
  void anUntrustedServerCertificateIsOneClearError() {
    Exception e = assertThrows(Exception.class, () -> reader().option("tls", "true")
        .option("tls.trustStore", stranger.certificate().toString()).load(uri()).count());
    assertTrue(e.getMessage().contains("TLS handshake with gpudirect server")
        && e.getMessage().contains("tls.trustStore"), e.getMessage());
  }

  @Test
  void aPlaintextReaderIsToldTheServerRequiresTls() {
    Exception e = assertTimeoutPreemptively(Duration.ofSeconds(30),
        () -> assertThrows(Exception.class, () -> reader().load(uri()).count()));
    assertTrue(e.getMessage().contains("requires TLS") && e.getMessage().contains("tls=true"), e.getMessage());
  }

  @Test
  void aTrustStoreWithoutTlsIsAMistakeNamed() {
    Exception e = assertThrows(Exception.class, () -> reader()
        .option("tls.trustStore", cert.certificate().toString()).load(uri()).count());
    assertTrue(e.getMessage().contains("tls.trustStore is set"), e.getMessage());
  }
}
