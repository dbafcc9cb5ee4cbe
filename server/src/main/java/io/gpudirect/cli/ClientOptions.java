package io.gpudirect.cli;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.tls.TlsContexts;
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
  @Option(names = "--secret-file", description = "File holding the server's shared secret (or $GPUDIRECT_SECRET_FILE).")
  Path secretFile;

  @Option(names = {"--secret", "--auth-secret"}, hidden = true, paramLabel = "REFUSED")
  String secretOnCommandLine;

  @Option(names = "--streams", description = "TCP connections to the server.")
  Integer streams;

  @Option(names = "--transport", paramLabel = "auto|tcp|rdma",
      description = "How to reach the server (default auto: RDMA when it works, else TCP, saying why).")
  String transport;

  @Option(names = "--max-entries", paramLabel = "N",
      description = "Most files a listing may have (default 1,000,000); past it the listing fails.")
  Integer maxListEntries;

  @Option(names = "--max-bytes-in-flight", paramLabel = "BYTES",
      description = "Bytes requested but not yet received, over all streams (default 64 MiB).")
  Integer maxBytesInFlight;

  @Option(names = "--tls", description = "Connect with TLS (the server runs with --tls-cert/--tls-key).")
  boolean tls;

  @Option(names = "--tls-trust-store", paramLabel = "PEM",
      description = "PEM certificates to trust for --tls (a CA or the server's own); default: the JDK's CAs.")
  Path tlsTrustStore;

  /** A client of {@code uri}'s server; the caller closes it. */
  RemoteStore connect(GpuDirectUri uri) {
    return BlockClient.connect(new InetSocketAddress(uri.host(), uri.port()), config().build());
  }

  /** The block client's settings these options give (secret read, TLS, streams, transport). */
  public ClientConfig.Builder config() {
    SecretFile.refuseOnCommandLine(secretOnCommandLine);
    String secret = SecretFile.read(secretFile);
    ClientConfig.Builder config = ClientConfig.builder()
        .secretSetting(SecretFile.SETTING)
        .secret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8))
        .tls(tls || tlsTrustStore != null)
        .tlsTrustStore(tlsTrustStore);
    if (streams != null) {
      config.streams(streams);
    }
    if (transport != null) {
      config.transport(transport);
    }
    if (maxBytesInFlight != null) {
      config.maxBytesInFlight(maxBytesInFlight);
    }
    if (maxListEntries != null) {
      config.maxListEntries(maxListEntries);
    }
    return config;
  }

  /** The streams asked for with {@code --streams}; null when left to the default. */
  public Integer streams() {
    return streams;
  }

  /** {@code uri}'s server's counters (STATUS), over a connection of these options' secret and TLS. */
  public Map<String, Long> serverStatus(GpuDirectUri uri) {
    SecretFile.refuseOnCommandLine(secretOnCommandLine);
    return ServerStatus.fetch(uri, SecretFile.read(secretFile),
        tls || tlsTrustStore != null ? TlsContexts.client(tlsTrustStore) : null);
  }
}
