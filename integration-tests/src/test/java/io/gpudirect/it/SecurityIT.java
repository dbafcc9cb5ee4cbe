package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.LoginTries;
import io.gpudirect.server.ManualLoginClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a Spark user sees when a path leaves the root or a secret is wrong: one clear error each. */
class SecurityIT {
  @TempDir
  Path tmp;

  @AfterEach
  void clearSecret() {
    LocalSpark.get().conf().unset("spark.gpudirect.auth.secret");
    RemoteStores.closeAll();
  }

  @Test
  void pathsOutsideTheRootAreRefused() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.writeString(tmp.resolve("secret.parquet"), "outside the root");
    Files.createSymbolicLink(root.resolve("escape.parquet"), tmp.resolve("secret.parquet"));
    SparkSession spark = LocalSpark.get();
    try (ServerFixture fixture = ServerFixture.serve(root)) {
      for (String path : new String[] {"../secret.parquet", "a/../../secret.parquet", "escape.parquet"}) {
        Exception e = assertThrows(Exception.class,
            () -> spark.read().format("gpudirect").load(fixture.uri(path)).collectAsList());
        assertTrue(e.getMessage().contains("server root"), path + ": " + e.getMessage());
      }
      Exception absolute = assertThrows(Exception.class, () -> spark.read().format("gpudirect")
          .option("servers", "127.0.0.1:" + fixture.server.port()).load("//etc/passwd").collectAsList());
      assertTrue(absolute.getMessage().contains("etc/passwd"), absolute.getMessage());
    }
  }

  @Test
  void encodedUnicodeAndSpecialFilePathsGetOneClearErrorAndNeverHang() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    Files.writeString(tmp.resolve("secret.parquet"), "outside the root");
    Path data = LocalSpark.testdata().resolve("parquet/alltypes_plain.parquet");
    Files.createDirectories(root.resolve("d"));
    Files.copy(data, root.resolve("d/ok.parquet"));
    Process mkfifo = new ProcessBuilder("mkfifo", root.resolve("d/pipe.parquet").toString()).start();
    assertEquals(0, mkfifo.waitFor());
    Files.createSymbolicLink(root.resolve("zero.parquet"), Path.of("/dev/zero"));
    SparkSession spark = LocalSpark.get();
    try (ServerFixture fixture = ServerFixture.serve(root)) {
      // The URI is decoded once, like any URI: %2e%2e is '..', and the server refuses it.
      for (String path : new String[] {"%2e%2e/secret.parquet", "d/..%2f..%2fsecret.parquet", "%2E%2E%2Fsecret.parquet"}) {
        assertRefused(spark, fixture.uri(path), "climbs above the server root");
      }
      // Decoded once only: a double-encoded or look-alike '..' is just a name that does not exist.
      for (String path : new String[] {"%252e%252e/secret.parquet", "\uff0e\uff0e/secret.parquet", "%EF%BC%8E%EF%BC%8E/secret.parquet"}) {
        assertRefused(spark, fixture.uri(path), "No such file");
      }
      assertRefused(spark, fixture.uri("d%00/../../secret.parquet"), "NUL");
      // Special files: a FIFO (opening it would block) and a device behind a symlink.
      assertRefused(spark, fixture.uri("d/pipe.parquet"), "not a regular file");
      assertRefused(spark, fixture.uri("zero.parquet"), "server root");
      // A directory scan skips the FIFO and reads the rest.
      assertEquals(8, assertTimeoutPreemptively(Duration.ofSeconds(60),
          () -> spark.read().format("gpudirect").load(fixture.uri("d")).count()));
    }
  }

  private static void assertRefused(SparkSession spark, String uri, String words) {
    Exception e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(Exception.class,
        () -> spark.read().format("gpudirect").load(uri).collectAsList()), uri + " hung");
    assertTrue(e.getMessage().contains(words), uri + ": " + e.getMessage());
    assertTrue(!e.getMessage().contains("outside the root"), "never the secret file's content");
  }

  @Test
  void aWrongOrMissingSecretIsRefusedAndTheRightOneReads() throws Exception {
    SparkSession spark = LocalSpark.get();
    Path parquet = LocalSpark.testdata().resolve("parquet");
    try (ServerFixture fixture = ServerFixture.serve(parquet, "s3cr3t-value-long-enough".getBytes(StandardCharsets.UTF_8))) {
      String uri = fixture.uri("alltypes_plain.parquet");
      Exception missing = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(uri).count());
      assertTrue(missing.getMessage().contains("requires a secret"), missing.getMessage());

      RemoteStores.closeAll();
      spark.conf().set("spark.gpudirect.auth.secret", "not-the-secret-42");
      Exception wrong = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(uri).count());
      assertTrue(wrong.getMessage().toLowerCase().contains("secret"), wrong.getMessage());
      assertTrue(!wrong.getMessage().contains("s3cr3t-value-long-enough") && !wrong.getMessage().contains("not-the-secret-42"),
          "the error never shows a secret: " + wrong.getMessage());

      RemoteStores.closeAll();
      spark.conf().set("spark.gpudirect.auth.secret", "s3cr3t-value-long-enough");
      assertEquals(8, spark.read().format("gpudirect").load(uri).count());
    }
  }
  /**
   * Hadoop caches the gpudirect:// file system per server and user, made with the first conf:
   * a secret corrected in the session must still reach it, without a new session, and the
   * error must name the address dialled and the setting a Spark user sets.
   */
  @Test
  void aCorrectedSecretWorksInTheSameSessionThroughSparksOwnReader() {
    SparkSession spark = LocalSpark.get();
    Path dir = tmp.resolve("data");
    spark.range(0, 100, 1, 1).toDF().write().parquet(dir.resolve("t").toString());
    try (ServerFixture fixture = ServerFixture.serve(dir, "s3cr3t-value-long-enough".getBytes(StandardCharsets.UTF_8))) {
      String uri = fixture.uri("t");
      spark.conf().set("spark.gpudirect.auth.secret", "not-the-secret-42");
      Exception wrong = assertThrows(Exception.class, () -> spark.read().parquet(uri).count());
      String expected = "Secret rejected by gpudirect server 127.0.0.1:" + fixture.server.port()
          + ": the secret in spark.gpudirect.auth.secret (in the Spark session conf, or the read option"
          + " auth.secret) is not the one the server was started with (its --secret-file)";
      assertTrue(messages(wrong).contains(expected), messages(wrong));

      spark.conf().set("spark.gpudirect.auth.secret", "s3cr3t-value-long-enough");
      assertEquals(100, spark.read().parquet(uri).count());
      assertEquals(100, spark.read().format("gpudirect").load(uri).count());
    }
  }

  /**
   * A Spark job with the right secret, from an address backing off after failed logins, fails
   * saying the server is throttling and for how long, not that the secret is wrong (before: it
   * was told its secret was not the server's); once the wait is over, it reads.
   */
  @Test
  void aThrottledJobIsToldItIsThrottledAndForHowLong() {
    SparkSession spark = LocalSpark.get();
    Path parquet = LocalSpark.testdata().resolve("parquet");
    byte[] secret = "s3cr3t-value-long-enough".getBytes(StandardCharsets.UTF_8);
    ManualLoginClock clock = new ManualLoginClock();
    try (ServerFixture fixture = ServerFixture.serve(parquet, secret, clock)) {
      String uri = fixture.uri("alltypes_plain.parquet");
      spark.conf().set("spark.gpudirect.auth.secret", "s3cr3t-value-long-enough");
      LoginTries.failFrom("127.0.0.1", fixture.server.port(), LoginTries.FREE_FAILURES);
      Exception throttled = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(uri).count());
      String expected = "Gpudirect server 127.0.0.1:" + fixture.server.port() + " is throttling logins from"
          + " this client's address, so it did not check the secret in spark.gpudirect.auth.secret";
      assertTrue(messages(throttled).contains(expected), messages(throttled));
      assertTrue(messages(throttled).contains("logins from 127.0.0.1 are refused for another 1 s after "
          + LoginTries.FREE_FAILURES + " failed logins from that address"), messages(throttled));
      assertTrue(!messages(throttled).contains("is not the one the server was started with"), messages(throttled));

      clock.advance(Duration.ofSeconds(1));
      RemoteStores.closeAll();
      assertEquals(8, spark.read().format("gpudirect").load(uri).count());
    }
  }

  private static String messages(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c.getMessage()).append('\n');
    }
    return sb.toString();
  }
}
