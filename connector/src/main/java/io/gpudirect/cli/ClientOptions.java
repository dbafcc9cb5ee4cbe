package io.gpudirect.cli;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.GpuDirectUri;
import io.gpudirect.remote.RemoteStores;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** Options shared by the commands that read from a server. */
final class ClientOptions {
  @Option(names = "--secret-file", description = "File holding the server's shared secret (or $GPUDIRECT_SECRET_FILE).")
  Path secretFile;

  @Option(names = {"--secret", "--auth-secret"}, hidden = true, paramLabel = "REFUSED")
  String secretOnCommandLine;

  @Option(names = "--streams", description = "TCP connections to the server.")
  Integer streams;

  @Option(names = "--tls", description = "Connect with TLS (the server runs with --tls-cert/--tls-key).")
  boolean tls;

  @Option(names = "--tls-trust-store", paramLabel = "PEM",
      description = "PEM certificates to trust for --tls (a CA or the server's own); default: the JDK's CAs.")
  Path tlsTrustStore;

  RemoteStore connect(GpuDirectUri uri) {
    SecretFile.refuseOnCommandLine(secretOnCommandLine);
    Map<String, String> given = new HashMap<>();
    String secret = SecretFile.read(secretFile);
    if (secret != null) {
      given.put(GpuDirectOption.AUTH_SECRET.key(), secret);
    }
    if (tls || tlsTrustStore != null) {
      given.put(GpuDirectOption.TLS.key(), "true");
    }
    if (tlsTrustStore != null) {
      given.put(GpuDirectOption.TLS_TRUST_STORE.key(), tlsTrustStore.toString());
    }
    if (streams != null) {
      given.put(GpuDirectOption.STREAMS.key(), streams.toString());
    }
    return RemoteStores.get(uri, ResolvedOptions.resolve(given, System::getProperty), SecretFile.SETTING);
  }
}
