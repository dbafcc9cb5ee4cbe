package io.gpudirect.cli;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Options shared by the commands that read from a server. Everything else is the block
 * client's default ({@link ClientConfig.Builder}): these commands run without Spark, so the
 * {@code spark.gpudirect.*} settings of a Spark read do not reach them.
 */
public final class ClientOptions {
  /** More streams than a server serves connections (256 by default) would only be refused. */
  static final int MAX_STREAMS = 256;
  /** A window is memory held per server; the best measured was 192 MiB (docs/benchmarks.md). */
  static final long MAX_BYTES_IN_FLIGHT = 1L << 30;

  @Option(names = "--secret-file", description = "File holding the server's shared secret (or $GPUDIRECT_SECRET_FILE).")
  Path secretFile;

  @Option(names = {"--secret", "--auth-secret"}, hidden = true, paramLabel = "REFUSED")
  String secretOnCommandLine;

  @Option(names = "--streams", paramLabel = "N", description = "TCP connections to the server (1 to "
      + MAX_STREAMS + "; default 4).")
  Integer streams;

  @Option(names = "--transport", paramLabel = "auto|tcp|rdma",
      description = "How to reach the server (default auto: RDMA when it works, else TCP).")
  String transport;

  @Option(names = "--max-bytes-in-flight", paramLabel = "SIZE",
      description = "Bytes requested but not yet received, over all streams: from one request's 4m to 1g"
          + " (default 64m; 8m, 1g as Spark writes sizes).")
  String maxBytesInFlight;

  @Option(names = "--tls", description = "Connect with TLS (the server runs with --tls-cert/--tls-key).")
  boolean tls;

  @Option(names = "--tls-trust-store", paramLabel = "PEM",
      description = "PEM certificates to trust for --tls (a CA or the server's own); default: the JDK's CAs.")
  Path tlsTrustStore;

  /** A client of {@code uri}'s server; the caller closes it. */
  RemoteStore connect(GpuDirectUri uri) {
    return connect(uri, config());
  }

  /** A client of {@code uri}'s server with {@code config}; the caller closes it. */
  static RemoteStore connect(GpuDirectUri uri, ClientConfig.Builder config) {
    return BlockClient.connect(new InetSocketAddress(uri.host(), uri.port()), config.build());
  }

  /**
   * The block client's settings these options give (secret read, TLS, streams, transport); a
   * number out of its range is refused here, naming its option.
   */
  public ClientConfig.Builder config() {
    SecretFile.refuseOnCommandLine(secretOnCommandLine);
    ClientConfig.Builder config = ClientConfig.builder();
    if (streams != null) {
      config.streams(OptionValues.count("--streams", streams, 1, MAX_STREAMS));
    }
    if (maxBytesInFlight != null) {
      // Below one request's size, no request could ever be sent.
      int chunk = ClientConfig.builder().build().chunkSize();
      config.maxBytesInFlight((int) OptionValues.size("--max-bytes-in-flight", maxBytesInFlight, chunk,
          MAX_BYTES_IN_FLIGHT));
    }
    String secret = SecretFile.read(secretFile);
    config.secretSetting(SecretFile.SETTING)
        .secret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8))
        .tls(tls || tlsTrustStore != null)
        .tlsTrustStore(tlsTrustStore);
    if (transport != null) {
      config.transport(transport);
    }
    return config;
  }

  /** The streams asked for with {@code --streams}; null when left to the default. */
  public Integer streams() {
    return streams;
  }

  /** {@code uri}'s server's counters (STATUS), over a connection of these options' secret and TLS. */
  public Map<String, Long> serverStatus(GpuDirectUri uri) {
    return ServerStatus.fetch(uri, config());
  }
}
