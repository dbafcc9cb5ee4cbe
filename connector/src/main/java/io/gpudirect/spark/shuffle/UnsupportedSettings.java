package io.gpudirect.spark.shuffle;

import io.gpudirect.GpuDirectException;
import org.apache.spark.SparkConf;

/** Spark settings this shuffle manager cannot honour, refused when it is built, each with what to do instead. */
final class UnsupportedSettings {
  private UnsupportedSettings() {}

  static void refuse(SparkConf conf, ShuffleTransport transport) {
    String manager = GpuDirectShuffleManager.class.getSimpleName();
    if (conf.getBoolean("spark.shuffle.service.enabled", false)) {
      // The external service would serve (and outlive executors with) the very files each
      // executor's gpudirect server serves; reducers here never ask it, so it only misleads the
      // scheduler into keeping map outputs of lost executors.
      throw new GpuDirectException(manager + " serves each executor's map outputs from the executor itself"
          + " and cannot run with spark.shuffle.service.enabled=true: set it to false (for dynamic allocation,"
          + " set spark.dynamicAllocation.shuffleTracking.enabled=true instead), or use Spark's own shuffle manager");
    }
    if (conf.getBoolean("spark.shuffle.push.enabled", false)) {
      throw new GpuDirectException(manager + " does not support push-based shuffle, which merges map outputs"
          + " in the external shuffle service: set spark.shuffle.push.enabled=false");
    }
    if ((conf.getBoolean("spark.network.crypto.enabled", false)
        || conf.getBoolean("spark.authenticate.enableSaslEncryption", false)) && !transport.tls()) {
      throw new GpuDirectException(manager + " would send map outputs unencrypted while Spark's RPC encryption"
          + " (spark.network.crypto.enabled or spark.authenticate.enableSaslEncryption) is on: encrypt the"
          + " shuffle with TLS (" + ShuffleTransport.TLS + "=true, " + ShuffleTransport.TLS_CERTIFICATE + ", "
          + ShuffleTransport.TLS_KEY + " and " + ShuffleTransport.TLS_TRUST_STORE + "; docs/shuffle.md), turn"
          + " Spark's RPC encryption off, or use Spark's own shuffle manager");
    }
  }
}
