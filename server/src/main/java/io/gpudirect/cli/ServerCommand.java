package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.server.ServerSecret;
import io.gpudirect.server.ServerStats;
import io.gpudirect.tls.TlsContexts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "server", mixinStandardHelpOptions = true,
    description = {"Serve one directory, read-only, to gpudirect readers.",
        "With --status URI: print the counters of a running server instead."})
final class ServerCommand implements Callable<Integer> {
  @Option(names = "--root", description = "Directory to serve (read-only). Required unless --status.")
  Path root;

  @Option(names = "--port", defaultValue = "7337", paramLabel = "N",
      description = "TCP port (default ${DEFAULT-VALUE}; 0 picks one).")
  int port;

  @Option(names = "--bind", defaultValue = "127.0.0.1",
      description = "Address to listen on (default ${DEFAULT-VALUE}; 0.0.0.0 for every interface).")
  String bind;

  @Option(names = "--secret-file", description = "File holding the shared secret (or $GPUDIRECT_SECRET_FILE);"
      + " clients must prove they know it. With --status: the secret to prove.")
  Path secretFile;

  @Option(names = {"--secret", "--auth-secret"}, hidden = true, paramLabel = "REFUSED")
  String secretOnCommandLine;

  @Option(names = "--tls-cert", paramLabel = "PEM",
      description = "Serve TLS only, with this certificate chain (PEM, server certificate first)."
          + " With --status: the certificate to trust.")
  Path tlsCert;

  @Option(names = "--tls-key", paramLabel = "PEM",
      description = "The certificate's private key: unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY).")
  Path tlsKey;

  @Option(names = "--rdma", defaultValue = "auto",
      description = "auto, on or off (default ${DEFAULT-VALUE}). auto serves RDMA too when UCX has an RDMA"
          + " transport (verbs) or libdisni and an RDMA device are there, and says why not otherwise; on serves"
          + " it over whatever UCX has (TCP included, named so) or fails to start saying what is missing;"
          + " off serves TCP only.")
  String rdma;

  @Option(names = "--rdma-provider", defaultValue = "auto", paramLabel = "auto|ucx|disni",
      description = "What RDMA runs on (default ${DEFAULT-VALUE}): auto takes UCX when libucp loads, else"
          + " DiSNI. Clients must use the same (rdma.provider).")
  String rdmaProvider;

  @Option(names = "--shutdown-grace-seconds", defaultValue = "30", paramLabel = "S",
      description = "On SIGTERM, how long reads in flight may take to finish: 0 to 3600 (default ${DEFAULT-VALUE}).")
  int graceSeconds;

  @Option(names = "--max-connections", defaultValue = "256", paramLabel = "N",
      description = "Authenticated connections served at once, one thread each: 1 to 65536 (default"
          + " ${DEFAULT-VALUE}). A client past it is told the limit and this option. Each Spark executor opens"
          + " its streams (4 by default) to each server.")
  int maxConnections;

  @Option(names = "--handshake-timeout-seconds", defaultValue = "10", paramLabel = "N",
      description = "Time a new connection has, from accept, for TLS, HELLO and authentication together;"
          + " it is then closed, however its bytes arrive: 1 to 600 (default ${DEFAULT-VALUE}).")
  int handshakeTimeoutSeconds;

  @Option(names = "--max-unauthenticated", defaultValue = "64", paramLabel = "N",
      description = "Connections still in their handshake at once, apart from the connections served;"
          + " a new one beyond this closes the oldest: 1 to 65536 (default ${DEFAULT-VALUE}).")
  int maxUnauthenticated;

  @Option(names = "--max-unauthenticated-per-address", defaultValue = "16", paramLabel = "N",
      description = "Of those, at most this many from one address (an IPv6 /64): 1 to --max-unauthenticated"
          + " (default ${DEFAULT-VALUE}).")
  int maxUnauthenticatedPerAddress;

  @Option(names = "--checksum-cache-mb", defaultValue = "32", paramLabel = "MB",
      description = "Heap kept for the CRC32C of each 64 KiB block read, so that a file read again is not"
          + " read twice (8 bytes a block: 32 MB covers 256 GiB of files; 0 turns it off; at most 65536;"
          + " default ${DEFAULT-VALUE}).")
  long checksumCacheMb;

  @Option(names = "--max-list-page-entries", defaultValue = "10000", paramLabel = "N",
      description = "Most entries in one page of a listing: 1 to 1000000 (default ${DEFAULT-VALUE}); a page's"
          + " walk holds about this many names in memory, and reads every name of each directory it enters.")
  int maxListPageEntries;

  @Option(names = "--max-concurrent-listings", paramLabel = "N",
      description = "Most listing pages walked at once, server-wide: 1 to 1024 (default: half the cores, at"
          + " least 1); further LISTs wait their turn.")
  Integer maxConcurrentListings;

  @Option(names = "--listing-queue-seconds", defaultValue = "10", paramLabel = "S",
      description = "How long a LIST waits for its turn before it is refused with LIMIT_EXCEEDED: 0 to 3600"
          + " (default ${DEFAULT-VALUE}).")
  int listingQueueSeconds;

  @Option(names = "--status", paramLabel = "URI",
      description = "Print the counters of the server at gpudirect://HOST:PORT and exit.")
  String status;

  @Override
  public Integer call() throws Exception {
    SecretFile.refuseOnCommandLine(secretOnCommandLine);
    if (status != null) {
      String secret = SecretFile.read(secretFile);
      return ServerStatus.print(status, ClientConfig.builder().secretSetting(SecretFile.SETTING)
          .secret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8))
          .tls(tlsCert != null).tlsTrustStore(tlsCert), System.out);
    }
    if (root == null) {
      throw new GpuDirectException("server: --root DIR is required (or --status URI to query a running server)");
    }
    RdmaMode rdmaMode = RdmaMode.parse(rdma);
    BlockServerBuilder builder = limits();
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new GpuDirectException("server: --tls-cert and --tls-key go together (the certificate"
          + " chain and its private key, both PEM)");
    }
    String secret = SecretFile.read(secretFile);
    if (secret != null) {
      Path file = SecretFile.resolve(secretFile);
      ServerSecret.checkLength(secret.getBytes(StandardCharsets.UTF_8), "secret file " + file,
          file.toString());
      ServerSecret.warnIfReadableByOthers(file);
    }
    BlockServer server = builder
        .root(root)
        .bindAddress(bind)
        .secret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8))
        .rdma(rdmaMode)
        .rdmaProvider(rdmaProvider)
        .tls(tlsCert == null ? null : TlsContexts.server(tlsCert, tlsKey))
        .build();
    server.start();
    CountDownLatch stopped = new CountDownLatch(1);
    // SIGTERM and Ctrl-C: stop accepting, let reads in flight finish within the grace period, exit.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      ServerStats now = server.stats();
      System.out.println("gpudirect server on " + server.address() + " shutting down: finishing "
          + now.readsInFlight() + " reads in flight on " + now.connectionsActive() + " connections (grace period "
          + graceSeconds + " s)");
      System.out.flush();
      server.close();
      System.out.println("gpudirect server on " + server.address() + " stopped: " + server.stats().toMap());
      System.out.flush();
      stopped.countDown();
    }, "gpudirect-server-shutdown"));
    System.out.println("gpudirect server listening on " + bind + ":" + server.port());
    System.out.println("serving " + root.toAbsolutePath().normalize() + " read-only over " + server.transports()
        + " (" + server.rdmaStatus() + ")"
        + "; TLS " + (tlsCert == null ? "off" : "on")
        + "; authentication " + (secret == null ? "off" : "on")
        + "; counters: gpudirect server --status gpudirect://" + bind + ":" + server.port()
        + (server.jmxName() == null ? "" : " or JMX " + server.jmxName()));
    System.out.flush();
    stopped.await();
    return 0;
  }

  /** The server's numbers, each checked against its range before anything is bound or read. */
  private BlockServerBuilder limits() {
    BlockServerBuilder builder = BlockServer.builder()
        .port(OptionValues.count("--port", port, 0, 65535))
        .shutdownGracePeriod(Duration.ofSeconds(OptionValues.count("--shutdown-grace-seconds", graceSeconds, 0,
            3600)))
        .maxConnections(OptionValues.count("--max-connections", maxConnections, 1, 65536))
        .handshakeTimeout(Duration.ofSeconds(OptionValues.count("--handshake-timeout-seconds",
            handshakeTimeoutSeconds, 1, 600)))
        .maxUnauthenticated(OptionValues.count("--max-unauthenticated", maxUnauthenticated, 1, 65536))
        .maxUnauthenticatedPerAddress(OptionValues.count("--max-unauthenticated-per-address",
            maxUnauthenticatedPerAddress, 1, maxUnauthenticated))
        .checksumCacheBlocks(OptionValues.count("--checksum-cache-mb", checksumCacheMb, 0, 65536) * (1L << 20) / 8)
        .maxListPageEntries(OptionValues.count("--max-list-page-entries", maxListPageEntries, 1, 1_000_000))
        .listingQueueTimeout(Duration.ofSeconds(OptionValues.count("--listing-queue-seconds",
            listingQueueSeconds, 0, 3600)));
    if (maxConcurrentListings != null) {
      builder.maxConcurrentListings(OptionValues.count("--max-concurrent-listings", maxConcurrentListings, 1,
          1024));
    }
    return builder;
  }
}
