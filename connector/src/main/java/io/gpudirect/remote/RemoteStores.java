package io.gpudirect.remote;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stores of this JVM, one per server and client settings. Every task of an executor that
 * reads from the same server shares its connections, so streams and the bytes-in-flight
 * window are per executor, not per task. Stores live until the JVM ends or {@link #closeAll()}.
 */
public final class RemoteStores {
  private static final Map<Key, RemoteStore> STORES = new ConcurrentHashMap<>();

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
    return get(host, port, options, SPARK_SECRET_SETTING);
  }

  /**
   * @param secretSetting where this caller's user sets the secret, named in authentication
   *     errors. Not part of the key: the source's planning and the file system its readers use
   *     must share one pool; a JVM has one kind of caller (Spark, or the command line).
   */
  public static RemoteStore get(String host, int port, ResolvedOptions options, String secretSetting) {
    ClientConfig config = clientConfig(options, secretSetting);
    Key key = new Key(host, port, settingsFingerprint(options));
    return STORES.computeIfAbsent(key, k -> BlockClient.connect(new InetSocketAddress(host, port), config));
  }

  public static RemoteStore get(GpuDirectUri uri, ResolvedOptions options) {
    return get(uri.host(), uri.port(), options);
  }

  public static RemoteStore get(GpuDirectUri uri, ResolvedOptions options, String secretSetting) {
    return get(uri.host(), uri.port(), options, secretSetting);
  }

  static ClientConfig clientConfig(ResolvedOptions o) {
    return clientConfig(o, SPARK_SECRET_SETTING);
  }

  static ClientConfig clientConfig(ResolvedOptions o, String secretSetting) {
    String secret = o.get(GpuDirectOption.AUTH_SECRET);
    return ClientConfig.builder()
        .secretSetting(secretSetting)
        .secret(secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8))
        .streams(o.getInt(GpuDirectOption.STREAMS))
        .maxBytesInFlight(Math.toIntExact(o.getBytes(GpuDirectOption.MAX_BYTES_IN_FLIGHT)))
        .chunkSize(Math.toIntExact(o.getBytes(GpuDirectOption.CHUNK_SIZE)))
        .connectTimeout(o.getDuration(GpuDirectOption.CONNECT_TIMEOUT))
        .requestTimeout(o.getDuration(GpuDirectOption.REQUEST_TIMEOUT))
        .maxRetries(o.getInt(GpuDirectOption.MAX_RETRIES))
        .retryBackoff(o.getDuration(GpuDirectOption.RETRY_BACKOFF))
        .transport(o.get(GpuDirectOption.TRANSPORT))
        .rdmaProvider(io.gpudirect.verbs.provider.RdmaProvider.parse(o.get(GpuDirectOption.RDMA_PROVIDER)))
        .checksums(o.getBoolean(GpuDirectOption.CHECKSUMS))
        .tls(o.getBoolean(GpuDirectOption.TLS))
        .tlsTrustStore(trustStore(o))
        .maxListEntries(o.getInt(GpuDirectOption.LISTING_MAX_ENTRIES))
        .maxListBytes(o.getBytes(GpuDirectOption.LISTING_MAX_BYTES))
        .listTimeout(o.getDuration(GpuDirectOption.LISTING_TIMEOUT))
        .build();
  }

  private static Path trustStore(ResolvedOptions o) {
    String trust = o.get(GpuDirectOption.TLS_TRUST_STORE);
    if (trust.isEmpty()) {
      return null;
    }
    if (!o.getBoolean(GpuDirectOption.TLS)) {
      throw new GpuDirectException("tls.trustStore is set (" + trust + ") but tls is not: set"
          + " tls=true to encrypt, or drop tls.trustStore");
    }
    return Path.of(trust);
  }

  /** Closes every store; later calls to {@link #get} connect again. */
  public static void closeAll() {
    for (Key k : STORES.keySet().toArray(new Key[0])) {
      RemoteStore s = STORES.remove(k);
      if (s != null) {
        s.close();
      }
    }
  }

  /** Every client setting, with the secret only as a digest so that the map never holds it. */
  private static String settingsFingerprint(ResolvedOptions o) {
    StringBuilder sb = new StringBuilder();
    for (GpuDirectOption opt : CLIENT_SETTINGS) {
      sb.append(o.get(opt)).append('\0');
    }
    try {
      byte[] digest = java.security.MessageDigest.getInstance("SHA-256")
          .digest(o.get(GpuDirectOption.AUTH_SECRET).getBytes(StandardCharsets.UTF_8));
      return sb.append(java.util.HexFormat.of().formatHex(digest)).toString();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }

  private static final GpuDirectOption[] CLIENT_SETTINGS = {
      GpuDirectOption.TRANSPORT, GpuDirectOption.RDMA_PROVIDER, GpuDirectOption.STREAMS, GpuDirectOption.MAX_BYTES_IN_FLIGHT,
      GpuDirectOption.CHUNK_SIZE, GpuDirectOption.CONNECT_TIMEOUT, GpuDirectOption.REQUEST_TIMEOUT,
      GpuDirectOption.MAX_RETRIES, GpuDirectOption.RETRY_BACKOFF, GpuDirectOption.CHECKSUMS,
      GpuDirectOption.TLS, GpuDirectOption.TLS_TRUST_STORE, GpuDirectOption.LISTING_MAX_ENTRIES,
      GpuDirectOption.LISTING_MAX_BYTES, GpuDirectOption.LISTING_TIMEOUT};

  private record Key(String host, int port, String settings) {}
}
