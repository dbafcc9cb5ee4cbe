package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.remote.RemoteStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
  void aWrongOrMissingSecretIsRefusedAndTheRightOneReads() throws Exception {
    SparkSession spark = LocalSpark.get();
    Path parquet = LocalSpark.testdata().resolve("parquet");
    try (ServerFixture fixture = ServerFixture.serve(parquet, "s3cr3t-value".getBytes(StandardCharsets.UTF_8))) {
      String uri = fixture.uri("alltypes_plain.parquet");
      Exception missing = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(uri).count());
      assertTrue(missing.getMessage().contains("requires a secret"), missing.getMessage());

      RemoteStores.closeAll();
      spark.conf().set("spark.gpudirect.auth.secret", "not-the-secret-42");
      Exception wrong = assertThrows(Exception.class, () -> spark.read().format("gpudirect").load(uri).count());
      assertTrue(wrong.getMessage().toLowerCase().contains("secret"), wrong.getMessage());
      assertTrue(!wrong.getMessage().contains("s3cr3t-value") && !wrong.getMessage().contains("not-the-secret-42"),
          "the error never shows a secret: " + wrong.getMessage());

      RemoteStores.closeAll();
      spark.conf().set("spark.gpudirect.auth.secret", "s3cr3t-value");
      assertEquals(8, spark.read().format("gpudirect").load(uri).count());
    }
  }
}
