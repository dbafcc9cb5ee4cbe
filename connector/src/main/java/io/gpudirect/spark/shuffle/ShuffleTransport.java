package io.gpudirect.spark.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.options.ClientSettings;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.Secret;
import io.gpudirect.shuffle.server.ExecutorShuffleServer;
import io.gpudirect.tls.TlsContexts;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
import org.apache.spark.SparkConf;

/**
 * How an application's shuffle crosses the network, from its Spark conf: the read path's client
 * options under the shuffle's own prefix ({@code spark.gpudirect.shuffle.transport},
 * {@code .rdma.provider}, {@code .streams}, {@code .tls}, {@code .tls.trustStore}, the timeouts
 * and retries), parsed and checked by the same {@link ResolvedOptions} as a read's, and the
 * servers' TLS material ({@value #TLS_CERTIFICATE}, {@value #TLS_KEY}). The timeouts default to
 * Spark's own for its shuffle ({@code spark.shuffle.io.connectionTimeout}, {@code spark.network.timeout}),
 * so that a stalled executor fails its reducers' fetches when Spark's own fetcher would. The streams
 * to each server: Spark's connections per peer ({@code spark.shuffle.io.numConnectionsPerPeer})
 * where it is set; otherwise one per reduce task an executor runs at once, at most 4 (one where
 * {@code spark.executor.cores} is not set). A stream's requests are served one after another by one
 * server thread, so an executor's concurrent reduce tasks queue behind each other on one stream: on
 * the lab's 16-core host four cut the reducers' summed fetch wait about 8x (to 0.12x Spark's) at the
 * same job time and CPU. An executor of one core keeps one, as Spark opens: on a shaped link four
 * per server retransmitted 4-5 times what one did, at no better rate (docs/benchmarks.md, "The
 * shuffle on the shaped link").
 */
final class ShuffleTransport {
  static final String PREFIX = "spark.gpudirect.shuffle.";
  static final String TLS = PREFIX + "tls";
  static final String TLS_CERTIFICATE = PREFIX + "tls.certificate";
  static final String TLS_KEY = PREFIX + "tls.key";
  static final String TLS_TRUST_STORE = PREFIX + "tls.trustStore";
  /** The streams per server by default where executors run many tasks at once (a read's 4). */
  static final int MOST_DEFAULT_STREAMS = 4;
  /** What an executor's server with TLS tells a reducer without it: the shuffle's settings, not a read's. */
  private static final String SERVER_TLS_ADVICE = "set " + TLS + "=true, with " + TLS_TRUST_STORE
      + " naming its certificate or CA (an application's executors' servers take TLS only when it is set)";
  /** What a reducer with TLS is told of a server without it, after "so ". */
  private static final String CLIENT_TLS_ADVICE = "it was started without " + TLS + "=true, which this"
      + " reducer's application sets: it is another application's executor (on a port one of this application's"
      + " had), or one started with other settings; " + TLS + ", " + TLS_CERTIFICATE + " and " + TLS_KEY
      + " go alike to every executor of an application";

  private final ClientSettings client;
  private final String certificate;
  private final String privateKey;

  private ShuffleTransport(ClientSettings client, String certificate, String privateKey) {
    this.client = client;
    this.certificate = certificate;
    this.privateKey = privateKey;
  }

  /** Parsed and checked: a bad value fails here, naming its key, when the manager is built. */
  static ShuffleTransport of(SparkConf conf) {
    ClientSettings client = ResolvedOptions.fromConf(PREFIX, key -> conf.get(key, sparkDefault(conf, key)))
        .client();
    String certificate = conf.get(TLS_CERTIFICATE, "");
    String privateKey = conf.get(TLS_KEY, "");
    if (client.tls() && (certificate.isEmpty() || privateKey.isEmpty())) {
      throw new GpuDirectException(TLS + "=true needs each executor's server certificate and key: set "
          + TLS_CERTIFICATE + " (a PEM certificate chain) and " + TLS_KEY + " (its PKCS#8 PEM key), at the"
          + " same path on every host, and " + TLS_TRUST_STORE + " (a PEM file of the certificates or CA"
          + " reducers trust)");
    }
    if (!client.tls() && !(certificate + privateKey).isEmpty()) {
      throw new GpuDirectException(TLS_CERTIFICATE + " or " + TLS_KEY + " is set but " + TLS
          + " is not: set " + TLS + "=true to encrypt the shuffle, or drop them");
    }
    return new ShuffleTransport(client, certificate, privateKey);
  }

  /**
   * Spark's setting for what it has one of: its shuffle's connection timeout for a connect, its
   * network timeout for a request (Spark reads both in seconds where no unit is given), its
   * connections per peer for the streams to each server, or else the executor's concurrent tasks
   * (see the class's comment).
   */
  private static String sparkDefault(SparkConf conf, String key) {
    long network = conf.getTimeAsSeconds("spark.network.timeout", "120s");
    return switch (key.substring(PREFIX.length())) {
      case "connectTimeout" -> conf.getTimeAsSeconds("spark.shuffle.io.connectionTimeout", network + "s") + "s";
      case "requestTimeout" -> network + "s";
      case "streams" -> conf.get("spark.shuffle.io.numConnectionsPerPeer", String.valueOf(streamsPerTasks(conf)));
      default -> null;
    };
  }

  /** One stream per reduce task an executor runs at once, 1 to {@value #MOST_DEFAULT_STREAMS}. */
  private static int streamsPerTasks(SparkConf conf) {
    return Math.max(1, Math.min(MOST_DEFAULT_STREAMS, taskSlots(conf)));
  }

  /** The tasks an executor runs at once, as its configuration gives them: its cores over each task's. */
  static int taskSlots(SparkConf conf) {
    return conf.getInt("spark.executor.cores", 1) / Math.max(1, conf.getInt("spark.task.cpus", 1));
  }

  boolean tls() {
    return client.tls();
  }

  /** The reducers' client configuration, proving {@code secret}, named by {@code secretSetting} in errors. */
  ClientConfig client(byte[] secret, String secretSetting) {
    return client.config(Secret.none(), secretSetting).toBuilder().secret(secret).tlsAdvice(CLIENT_TLS_ADVICE)
        .build();
  }

  /**
   * What each executor's server serves besides TCP: RDMA where the reducers may ask for it
   * ({@code transport=auto} only where the provider finds RDMA, {@code rdma} over whatever it has),
   * and TLS with the configured material.
   */
  ExecutorShuffleServer.Transport serving() {
    return new ExecutorShuffleServer.Transport(client.transport(), client.rdmaProvider(),
        client.tls() ? serverTls() : null, SERVER_TLS_ADVICE);
  }

  private SSLContext serverTls() {
    try {
      return TlsContexts.server(Path.of(certificate), Path.of(privateKey));
    } catch (GpuDirectException e) {
      throw new GpuDirectException("Cannot use the shuffle's TLS material (" + TLS_CERTIFICATE + "=" + certificate
          + ", " + TLS_KEY + "=" + privateKey + ") on this host: " + e.getMessage(), e);
    }
  }
}
