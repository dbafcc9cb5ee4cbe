package io.gpudirect.options;

import java.util.Locale;

/**
 * Every option of the gpudirect source. A value comes from the read option, else from the
 * session conf {@code spark.gpudirect.<key>}, else from the default here. docs/configuration.md
 * lists the same options; a test keeps the two in step.
 */
public enum GpuDirectOption {
  SERVERS("servers", "",
      "Comma-separated host:port list; with it, load() takes a plain path read from every server."),
  FORMAT("format", "",
      "parquet or arrow (Arrow IPC file or stream); empty means: from the file extension."),
  PATH_GLOB_FILTER("pathGlobFilter", "",
      "Reads only the files whose name matches this glob, as Spark's option of the same name: *.parquet."),
  BASE_PATH("basePath", "",
      "Where partition directories (key=value) begin, as Spark's option of the same name; empty means: the path loaded."),
  TRANSPORT("transport", "auto",
      "auto, tcp or rdma. auto picks RDMA when it works and reports which transport ran and why."),
  RDMA_PROVIDER("rdma.provider", "auto",
      "auto, ucx or disni: what RDMA runs on. auto takes UCX when libucp loads, else DiSNI."),
  STREAMS("streams", "4", "TCP connections per server and executor: 1 to 256."),
  MAX_BYTES_IN_FLIGHT("maxBytesInFlight", "64m",
      "Bytes requested but not yet received, per server and executor."),
  CHUNK_SIZE("chunkSize", "4m", "Largest single read request; larger reads are split and pipelined."),
  READ_AHEAD("readAhead", "0",
      "Bytes of a Parquet slice's needed column chunks fetched ahead of the reader, per task; 0 (the default) is off."),
  MAX_PARTITION_BYTES("maxPartitionBytes", "",
      "Largest target size of one Spark partition, made of whole row groups or record batches;"
          + " a smaller scan aims at an even share per core, as Spark's file sources do. Unset:"
          + " Spark's spark.sql.files.maxPartitionBytes (128m unless set)."),
  CONNECT_TIMEOUT("connectTimeout", "10s",
      "Time allowed to connect and authenticate: 10s, 500ms, 2min; a bare number is milliseconds."),
  REQUEST_TIMEOUT("requestTimeout", "30s",
      "Time allowed for one read to complete: 30s, 500ms, 2min; a bare number is milliseconds."),
  MAX_RETRIES("maxRetries", "3",
      "Retries of a failed connect or a checksum mismatch before the read fails: 0 to 100."),
  RETRY_BACKOFF("retryBackoff", "100ms",
      "First wait between retries (100ms, 1s; a bare number is milliseconds); doubles on each retry."),
  LISTING_MAX_ENTRIES("listing.maxEntries", "1000000",
      "Most files one listing may have; a larger listing fails, naming this option."),
  LISTING_MAX_BYTES("listing.maxBytes", "256m",
      "Most bytes of entries (as sent) one listing may have; a larger listing fails."),
  LISTING_TIMEOUT("listing.timeout", "5min", "Time allowed for a whole listing, every page of it."),
  CHECKSUMS("checksums", "true",
      "CRC32C on every payload, checked by the client; retried on a mismatch."),
  AUTH_SECRET("auth.secret", "",
      "Shared secret of servers started with --secret-file. Set it in the session conf, not in code."),
  TLS("tls", "false",
      "Encrypt every connection with TLS; the server must be started with --tls-cert and --tls-key."),
  TLS_TRUST_STORE("tls.trustStore", "",
      "PEM file of the certificates TLS trusts (a CA, or the server's own); empty: the JDK's CAs."),
  FILTER_PUSHDOWN("filterPushdown", "true",
      "Skip Parquet row groups whose statistics rule out the query's filters."),
  OUTPUT("output", "auto",
      "auto, gpu or host: where batches are decoded and live. gpu gives batches of cuDF columns"
          + " on the device; host gives Spark host vectors; auto serves the consumer (see the rule below).");

  /** What a session conf key starts with: {@code spark.gpudirect.streams} for {@code streams}. */
  public static final String SESSION_PREFIX = "spark.gpudirect.";

  private final String key;
  private final String defaultValue;
  private final String doc;

  GpuDirectOption(String key, String defaultValue, String doc) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.doc = doc;
  }

  /** The name used with {@code .option(key, value)}. Spark matches it case-insensitively. */
  public String key() {
    return key;
  }

  /** The session conf key that supplies a default for this option. */
  public String sessionKey() {
    return SESSION_PREFIX + key;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String doc() {
    return doc;
  }

  /** A time limit, where a bare number (milliseconds) below a second is more likely a slip. */
  public boolean isTimeout() {
    return this == CONNECT_TIMEOUT || this == REQUEST_TIMEOUT;
  }

  /** Case-insensitive lookup by option key, or null. */
  public static GpuDirectOption forKey(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    for (GpuDirectOption o : values()) {
      if (o.key.toLowerCase(Locale.ROOT).equals(k)) {
        return o;
      }
    }
    return null;
  }
}
