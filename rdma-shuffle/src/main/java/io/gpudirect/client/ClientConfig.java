package io.gpudirect.client;

import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.nio.file.Path;
import java.time.Duration;

/** Immutable settings of a {@link BlockClient}; build with {@link #builder()}. */
public final class ClientConfig {
  private final byte[] secret;
  private final int streams;
  private final int maxBytesInFlight;
  private final int chunkSize;
  private final Duration connectTimeout;
  private final Duration requestTimeout;
  private final int maxRetries;
  private final Duration retryBackoff;
  private final String transport;
  private final RdmaProvider rdmaProvider;
  private final boolean checksums;
  private final boolean tls;
  private final Path tlsTrustStore;
  private final int maxListEntries;
  private final long maxListBytes;
  private final Duration listTimeout;
  private final String secretSetting;
  private final String tlsAdvice;

  private ClientConfig(Builder b) {
    this.secret = b.secret == null ? null : b.secret.clone();
    this.streams = b.streams;
    this.maxBytesInFlight = b.maxBytesInFlight;
    this.chunkSize = b.chunkSize;
    this.connectTimeout = b.connectTimeout;
    this.requestTimeout = b.requestTimeout;
    this.maxRetries = b.maxRetries;
    this.retryBackoff = b.retryBackoff;
    this.transport = b.transport;
    this.rdmaProvider = b.rdmaProvider;
    this.checksums = b.checksums;
    this.tls = b.tls;
    this.tlsTrustStore = b.tlsTrustStore;
    this.maxListEntries = b.maxListEntries;
    this.maxListBytes = b.maxListBytes;
    this.listTimeout = b.listTimeout;
    this.secretSetting = b.secretSetting;
    this.tlsAdvice = b.tlsAdvice;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static ClientConfig defaults() {
    return builder().build();
  }

  /** The shared secret (a copy), or null when none is configured. */
  public byte[] secret() {
    return secret == null ? null : secret.clone();
  }

  /** Connections per server. */
  public int streams() {
    return streams;
  }

  /** Upper bound of bytes requested but not yet received, over all streams. */
  public int maxBytesInFlight() {
    return maxBytesInFlight;
  }

  /** Reads are split into requests of at most this many bytes (fewer where a read would not cover every stream). */
  public int chunkSize() {
    return chunkSize;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public Duration requestTimeout() {
    return requestTimeout;
  }

  public int maxRetries() {
    return maxRetries;
  }

  /** Delay before the first retry; doubled for each further one. */
  public Duration retryBackoff() {
    return retryBackoff;
  }

  /** "auto", "tcp" or "rdma". */
  public String transport() {
    return transport;
  }

  /** The verbs provider RDMA runs on: auto (UCX when libucp loads, else DiSNI), ucx or disni. */
  public RdmaProvider rdmaProvider() {
    return rdmaProvider;
  }

  /** Whether payloads carry a CRC32C that the client checks (negotiated in the handshake). */
  public boolean checksums() {
    return checksums;
  }

  /** Whether connections use TLS (TCP only). */
  public boolean tls() {
    return tls;
  }

  /** PEM file of the certificates trusted for TLS; null for the JDK's default CAs. */
  public Path tlsTrustStore() {
    return tlsTrustStore;
  }

  /** Most entries one listing may have; a server that sends more is refused. */
  public int maxListEntries() {
    return maxListEntries;
  }

  /** Most bytes of entries (as on the wire) one listing may have. */
  public long maxListBytes() {
    return maxListBytes;
  }

  /** Time allowed for a whole listing, every page of it. */
  public Duration listTimeout() {
    return listTimeout;
  }

  /** Where the user sets the secret, as authentication errors name it (e.g. a Spark key). */
  public String secretSetting() {
    return secretSetting;
  }

  /** What its user is told to do when a server answers TLS in plaintext (see {@link Builder#tlsAdvice}). */
  public String tlsAdvice() {
    return tlsAdvice;
  }

  public Builder toBuilder() {
    return new Builder().secret(secret).streams(streams).maxBytesInFlight(maxBytesInFlight)
        .chunkSize(chunkSize).connectTimeout(connectTimeout).requestTimeout(requestTimeout)
        .maxRetries(maxRetries).retryBackoff(retryBackoff).transport(transport)
        .rdmaProvider(rdmaProvider)
        .checksums(checksums).tls(tls).tlsTrustStore(tlsTrustStore)
        .maxListEntries(maxListEntries).maxListBytes(maxListBytes).listTimeout(listTimeout)
        .secretSetting(secretSetting).tlsAdvice(tlsAdvice);
  }

  @Override
  public String toString() {
    return "ClientConfig[secret=" + (secret == null ? "none" : "set") + ", streams=" + streams
        + ", maxBytesInFlight=" + maxBytesInFlight + ", chunkSize=" + chunkSize
        + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout
        + ", maxRetries=" + maxRetries + ", retryBackoff=" + retryBackoff + ", transport="
        + transport + ", rdmaProvider=" + rdmaProvider + ", checksums=" + checksums + ", tls=" + tls
        + (tlsTrustStore == null ? "" : ", tlsTrustStore=" + tlsTrustStore)
        + ", maxListEntries=" + maxListEntries + ", maxListBytes=" + maxListBytes
        + ", listTimeout=" + listTimeout + "]";
  }

  /** Defaults: 4 streams, 64 MiB in flight, 4 MiB chunks, 10 s connect, 30 s request,
   *  3 retries from 100 ms, transport auto; listings of at most 1,000,000 entries, 256 MiB
   *  and 5 minutes. */
  public static final class Builder {
    private byte[] secret;
    private int streams = 4;
    private int maxBytesInFlight = 64 << 20;
    private int chunkSize = 4 << 20;
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(30);
    private int maxRetries = 3;
    private Duration retryBackoff = Duration.ofMillis(100);
    private String transport = "auto";
    private RdmaProvider rdmaProvider = RdmaProvider.AUTO;
    private boolean checksums = true;
    private boolean tls;
    private Path tlsTrustStore;
    private int maxListEntries = 1_000_000;
    private long maxListBytes = 256L << 20;
    private Duration listTimeout = Duration.ofMinutes(5);
    private String secretSetting = ConnectionOptions.ANY_SECRET_SETTING;
    private String tlsAdvice = ConnectionOptions.ANY_TLS_ADVICE;

    private Builder() {}

    /**
     * Most entries a listing may have (default 1,000,000): what a listing holds in memory is
     * bounded by this and {@link #maxListBytes}, whatever a server sends.
     */
    public Builder maxListEntries(int maxListEntries) {
      this.maxListEntries = maxListEntries;
      return this;
    }

    /** Most bytes of entries, as on the wire, a listing may have; default 256 MiB. */
    public Builder maxListBytes(long maxListBytes) {
      this.maxListBytes = maxListBytes;
      return this;
    }

    /** Time allowed for a whole listing, every page of it; default 5 minutes. */
    public Builder listTimeout(Duration listTimeout) {
      this.listTimeout = listTimeout;
      return this;
    }

    /**
     * Where this client's user sets the secret ({@code spark.gpudirect.auth.secret},
     * {@code --secret-file}, ...): a rejected, missing or unexpected secret is reported with it.
     */
    public Builder secretSetting(String secretSetting) {
      this.secretSetting = secretSetting;
      return this;
    }

    /**
     * What this client's user is told to do when a server it reaches with {@link #tls} answers
     * in plaintext, after "it answered in plaintext (...), so ": by default the CLI's server flags
     * and the read path's option ({@link ConnectionOptions#ANY_TLS_ADVICE}); a caller whose
     * servers and clients turn TLS on elsewhere (the shuffle's Spark settings) names that.
     */
    public Builder tlsAdvice(String tlsAdvice) {
      this.tlsAdvice = tlsAdvice;
      return this;
    }

    /** Encrypt every connection with TLS; the server must run with a TLS certificate. */
    public Builder tls(boolean tls) {
      this.tls = tls;
      return this;
    }

    /** PEM certificates (a CA or the server's own) that TLS trusts; null for the JDK's CAs. */
    public Builder tlsTrustStore(Path tlsTrustStore) {
      this.tlsTrustStore = tlsTrustStore;
      return this;
    }

    public Builder secret(byte[] secret) {
      this.secret = secret == null ? null : secret.clone();
      return this;
    }

    public Builder streams(int streams) {
      this.streams = streams;
      return this;
    }

    public Builder maxBytesInFlight(int maxBytesInFlight) {
      this.maxBytesInFlight = maxBytesInFlight;
      return this;
    }

    public Builder chunkSize(int chunkSize) {
      this.chunkSize = chunkSize;
      return this;
    }

    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
      return this;
    }

    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    public Builder retryBackoff(Duration retryBackoff) {
      this.retryBackoff = retryBackoff;
      return this;
    }

    public Builder transport(String transport) {
      this.transport = transport;
      return this;
    }

    public Builder rdmaProvider(RdmaProvider provider) {
      this.rdmaProvider = provider;
      return this;
    }

    /** The provider by name, as {@code rdma.provider} gives it: auto, ucx or disni, in any case. */
    public Builder rdmaProvider(String provider) {
      return rdmaProvider(RdmaProvider.parse(provider));
    }

    /**
     * CRC32C on every payload, checked here. On by default; turning it off saves a pass
     * over every byte on both ends, and leaves corruption to TCP's weaker checksum.
     */
    public Builder checksums(boolean checksums) {
      this.checksums = checksums;
      return this;
    }

    public ClientConfig build() {
      check(secret == null || secret.length > 0, "secret must not be empty (null for none)");
      check(streams > 0, "streams must be positive: " + streams);
      check(chunkSize > 0, "chunkSize must be positive: " + chunkSize);
      check(maxBytesInFlight >= chunkSize, "maxBytesInFlight (" + maxBytesInFlight
          + ") must be at least chunkSize (" + chunkSize + ")");
      check(positive(connectTimeout), "connectTimeout must be positive");
      check(positive(requestTimeout), "requestTimeout must be positive");
      check(maxRetries >= 0, "maxRetries must not be negative: " + maxRetries);
      check(retryBackoff != null && !retryBackoff.isNegative(),
          "retryBackoff must not be negative");
      check(transport != null, "transport must be auto, tcp or rdma");
      check(rdmaProvider != null, "rdma.provider must be auto, ucx or disni");
      check(tls || tlsTrustStore == null, "tlsTrustStore is set but tls is off");
      check(maxListEntries > 0, "maxListEntries must be positive: " + maxListEntries);
      check(maxListBytes > 0, "maxListBytes must be positive: " + maxListBytes);
      check(positive(listTimeout), "listTimeout must be positive");
      check(secretSetting != null && !secretSetting.isBlank(), "secretSetting must name where the secret is set");
      check(tlsAdvice != null && !tlsAdvice.isBlank(), "tlsAdvice must say how TLS is turned on");
      return new ClientConfig(this);
    }

    private static boolean positive(Duration d) {
      return d != null && !d.isNegative() && !d.isZero();
    }

    private static void check(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException("Invalid gpudirect client config: " + message);
      }
    }
  }
}
