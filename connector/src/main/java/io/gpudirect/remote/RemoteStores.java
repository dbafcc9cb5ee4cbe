package io.gpudirect.remote;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientContext;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.ClientSettings;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.Secret;
import java.net.InetSocketAddress;

/**
 * The stores of this JVM, one per server and client settings, kept in the JVM's
 * {@link ClientContext#shared()}. Every task of an executor that reads from the same server
 * shares its connections, so streams and the bytes-in-flight window are per executor, not per
 * task. Stores live until the JVM ends or {@link #closeAll()}.
 */
public final class RemoteStores {
  static {
    Runtime.getRuntime().addShutdownHook(new Thread(RemoteStores::closeAll, "gpudirect-stores-shutdown"));
  }

  private RemoteStores() {}

  /**
   * Where a Spark user sets the secret, for spark.read.format("gpudirect") and the
   * gpudirect:// file system alike: what authentication errors of Spark reads name.
   */
  public static final String SPARK_SECRET_SETTING =
      "spark.gpudirect.auth.secret (in the Spark session conf, or the read option auth.secret)";

  public static RemoteStore get(String host, int port, ResolvedOptions options) {
    return get(host, port, options.client(), options.secret());
  }

  public static RemoteStore get(GpuDirectUri uri, ResolvedOptions options) {
    return get(uri.host(), uri.port(), options);
  }

  /** The store an executor uses: settings from the scan's read spec, the secret from its conf. */
  public static RemoteStore get(GpuDirectUri uri, ClientSettings settings, Secret secret) {
    return get(uri.host(), uri.port(), settings, secret);
  }

  /**
   * The store of these settings and secret. The source's planning, its readers and the
   * gpudirect:// file system of Spark's readers share it when their settings are equal.
   */
  private static RemoteStore get(String host, int port, ClientSettings settings, Secret secret) {
    // The secret only as a digest, so that the map never holds it.
    Key key = new Key(host, port, settings, secret.digest());
    ClientContext context = ClientContext.shared();
    return context.store(key, () -> BlockClient.connect(new InetSocketAddress(host, port),
        settings.config(secret, SPARK_SECRET_SETTING), context));
  }

  /** Closes every store; later calls to {@link #get} connect again. */
  public static void closeAll() {
    ClientContext.shared().closeStores();
  }

  private record Key(String host, int port, ClientSettings settings, String secretDigest) {}
}
