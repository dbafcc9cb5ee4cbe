package io.gpudirect.spark.shuffle;

import io.gpudirect.GpuDirectException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;

/**
 * The application's shuffle secret, which its executors' servers ask of every reducer, so that
 * another application's reducers (or anyone else on the network) read none of its map outputs.
 * With {@code spark.authenticate} on it is derived from Spark's own secret (HMAC-SHA256 of a
 * label, so Spark's secret itself never reaches a gpudirect connection); otherwise the driver's
 * manager makes 32 random bytes when it is built, before any executor starts, and puts them in
 * the conf as {@value #SETTING}, which executors get with the rest of the driver's conf and which
 * Spark's default redaction pattern ({@code (?i)secret|password|token}) hides in the UI and logs.
 */
final class ShuffleSecret {
  static final String SETTING = "spark.gpudirect.shuffle.secret";
  private static final String LABEL = "gpudirect-shuffle";

  private ShuffleSecret() {}

  /** On the driver: makes the application's secret unless Spark's is used or one is set already. */
  static void makeIfNeeded(SparkConf conf) {
    if (!conf.getBoolean("spark.authenticate", false) && !conf.contains(SETTING)) {
      byte[] secret = new byte[32];
      new SecureRandom().nextBytes(secret);
      conf.set(SETTING, HexFormat.of().formatHex(secret));
    }
  }

  /** The application's secret, on the driver or an executor, once its SparkEnv is up. */
  static byte[] of(SparkConf conf, SecurityManager security) {
    if (conf.getBoolean("spark.authenticate", false)) {
      try {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(security.getSecretKey().getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return mac.doFinal(LABEL.getBytes(StandardCharsets.UTF_8));
      } catch (GeneralSecurityException e) {
        throw new GpuDirectException("Cannot derive the gpudirect shuffle secret from Spark's: " + e.getMessage(), e);
      }
    }
    String secret = conf.get(SETTING, null);
    if (secret == null) {
      throw new GpuDirectException("No gpudirect shuffle secret in this executor's conf (" + SETTING
          + "): the driver's GpuDirectShuffleManager makes one at start. Set spark.shuffle.manager="
          + GpuDirectShuffleManager.class.getName() + " for the whole application (driver too), not for"
          + " executors alone");
    }
    return secret.getBytes(StandardCharsets.UTF_8);
  }
}
