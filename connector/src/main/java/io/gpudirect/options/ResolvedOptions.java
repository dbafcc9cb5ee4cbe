package io.gpudirect.options;

import io.gpudirect.GpuDirectException;
import io.gpudirect.SparkNotation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every option, resolved once and typed: a value comes from the read option (its key matched
 * case-insensitively), else from the session conf {@code spark.gpudirect.<key>}, else from the
 * default of {@link GpuDirectOption}. Every value is parsed here, so a misspelt one fails where
 * the options are resolved (on the driver, at {@code load()}), naming the option and its
 * session key, and no caller parses a string.
 *
 * <p>Not serializable, as Iceberg's {@code SparkReadConf} is not: a scan sends executors only
 * what they need ({@link ClientSettings}, never the {@link Secret}).
 */
public final class ResolvedOptions {
  private static final Logger LOG = LoggerFactory.getLogger(ResolvedOptions.class);
  /** Warnings already given in this JVM: options are resolved again by every read and file system. */
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  private final EnumMap<GpuDirectOption, String> values;
  /** Where the conf keeps these options: {@code spark.gpudirect.}, or the shuffle's own prefix. */
  private final String confPrefix;
  private final List<String> servers;
  private final long readAhead;
  private final OptionalLong maxPartitionBytes;
  private final boolean filterPushdown;
  private final ClientSettings client;
  private final Secret secret;

  private ResolvedOptions(EnumMap<GpuDirectOption, String> values, String confPrefix) {
    this.values = values;
    this.confPrefix = confPrefix;
    this.servers = list(GpuDirectOption.SERVERS);
    this.readAhead = bytes(GpuDirectOption.READ_AHEAD);
    this.maxPartitionBytes = get(GpuDirectOption.MAX_PARTITION_BYTES).isEmpty() ? OptionalLong.empty()
        : OptionalLong.of(atLeast(GpuDirectOption.MAX_PARTITION_BYTES,
            bytes(GpuDirectOption.MAX_PARTITION_BYTES), 1));
    this.filterPushdown = bool(GpuDirectOption.FILTER_PUSHDOWN);
    this.secret = Secret.of(get(GpuDirectOption.AUTH_SECRET));
    int chunkSize = (int) atLeast(GpuDirectOption.CHUNK_SIZE, intBytes(GpuDirectOption.CHUNK_SIZE), 1);
    int maxBytesInFlight = intBytes(GpuDirectOption.MAX_BYTES_IN_FLIGHT);
    if (maxBytesInFlight < chunkSize) {
      // Below one request's size, no request could ever be sent.
      throw invalid(GpuDirectOption.MAX_BYTES_IN_FLIGHT, "a size of at least chunkSize ("
          + get(GpuDirectOption.CHUNK_SIZE) + ")", null);
    }
    this.client = new ClientSettings(
        transport(),
        rdmaProvider(),
        // More streams than a server serves connections (256 by default) would only be refused.
        integer(GpuDirectOption.STREAMS, 1, 256),
        maxBytesInFlight,
        chunkSize,
        positive(GpuDirectOption.CONNECT_TIMEOUT),
        positive(GpuDirectOption.REQUEST_TIMEOUT),
        integer(GpuDirectOption.MAX_RETRIES, 0, 100),
        duration(GpuDirectOption.RETRY_BACKOFF),
        bool(GpuDirectOption.CHECKSUMS),
        bool(GpuDirectOption.TLS),
        trustStore(),
        integer(GpuDirectOption.LISTING_MAX_ENTRIES, 1, Integer.MAX_VALUE),
        atLeast(GpuDirectOption.LISTING_MAX_BYTES, bytes(GpuDirectOption.LISTING_MAX_BYTES), 1),
        positive(GpuDirectOption.LISTING_TIMEOUT));
  }

  /**
   * @param readOptions the options given to the reader (keys matched case-insensitively)
   * @param sessionConf looks up a session conf key ({@code spark.gpudirect.*}), or returns null
   */
  public static ResolvedOptions resolve(Map<String, String> readOptions, Function<String, String> sessionConf) {
    return resolve(readOptions, GpuDirectOption.SESSION_PREFIX, sessionConf);
  }

  /**
   * The options as a conf holds them under {@code confPrefix} ({@code spark.gpudirect.shuffle.transport}
   * for {@code transport}), with no read options: for settings that are not a read's, such as the
   * shuffle's transport, parsed and checked as a read's are and named by their key in errors.
   *
   * @param conf looks up a conf key, or returns null
   */
  public static ResolvedOptions fromConf(String confPrefix, Function<String, String> conf) {
    return resolve(Map.of(), confPrefix, conf);
  }

  private static ResolvedOptions resolve(Map<String, String> readOptions, String confPrefix,
      Function<String, String> conf) {
    Map<String, String> lower = new HashMap<>();
    readOptions.forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), v));
    EnumMap<GpuDirectOption, String> values = new EnumMap<>(GpuDirectOption.class);
    for (GpuDirectOption o : GpuDirectOption.values()) {
      String v = lower.get(o.key().toLowerCase(Locale.ROOT));
      if (v == null) {
        v = conf.apply(confPrefix + o.key());
      }
      values.put(o, v == null ? o.defaultValue() : v.trim());
    }
    return new ResolvedOptions(values, confPrefix);
  }

  /**
   * The resolved text of an option, as a conf would hold it: for handing options on to a conf
   * (see the gpudirect:// file system), and for the options whose value is a name or a path.
   */
  public String get(GpuDirectOption o) {
    return values.get(o);
  }

  /** Option {@code servers}: host:port of every server, empty when not set. */
  public List<String> servers() {
    return servers;
  }

  /** Option {@code format}; empty means: from the file extension. */
  public String format() {
    return get(GpuDirectOption.FORMAT);
  }

  /** Option {@code pathGlobFilter}; empty means every file. */
  public String pathGlobFilter() {
    return get(GpuDirectOption.PATH_GLOB_FILTER);
  }

  /** Option {@code basePath}: where partition directories begin; empty means the path loaded. */
  public String basePath() {
    return get(GpuDirectOption.BASE_PATH);
  }

  /** Option {@code output}: auto, gpu or host, as given (the reader's {@code Output} parses it). */
  public String output() {
    return get(GpuDirectOption.OUTPUT);
  }

  /** Option {@code readAhead} in bytes; 0 is off. */
  public long readAhead() {
    return readAhead;
  }

  /** Option {@code maxPartitionBytes}; empty when not set, and then Spark's own setting applies. */
  public OptionalLong maxPartitionBytes() {
    return maxPartitionBytes;
  }

  public boolean filterPushdown() {
    return filterPushdown;
  }

  /** The settings of the block client, without the secret. */
  public ClientSettings client() {
    return client;
  }

  /** Option {@code auth.secret}. */
  public Secret secret() {
    return secret;
  }

  private List<String> list(GpuDirectOption o) {
    List<String> items = new ArrayList<>();
    for (String item : get(o).split(",")) {
      if (!item.isBlank()) {
        items.add(item.trim());
      }
    }
    return Collections.unmodifiableList(items);
  }

  private int integer(GpuDirectOption o, int min, int max) {
    String range = "a whole number from " + min + " to " + max;
    int v;
    try {
      v = Integer.parseInt(get(o));
    } catch (NumberFormatException e) {
      throw invalid(o, range, e);
    }
    if (v < min || v > max) {
      throw invalid(o, range, null);
    }
    return v;
  }

  /** A size of at least {@code min} bytes. */
  private long atLeast(GpuDirectOption o, long bytes, long min) {
    if (bytes < min) {
      throw invalid(o, "a size of at least " + min, null);
    }
    return bytes;
  }

  /** A duration above zero: a timeout of nothing would fail everything at once. */
  private Duration positive(GpuDirectOption o) {
    Duration d = duration(o);
    if (d.isNegative() || d.isZero()) {
      throw invalid(o, "a duration above 0", null);
    }
    return d;
  }

  /** A size such as {@code 64m} or {@code 1g}, in Spark's notation. */
  private long bytes(GpuDirectOption o) {
    try {
      return SparkNotation.bytes(get(o));
    } catch (RuntimeException e) {
      throw invalid(o, "a size such as 64m or 1g", e);
    }
  }

  private int intBytes(GpuDirectOption o) {
    long v = bytes(o);
    if (v > Integer.MAX_VALUE) {
      throw invalid(o, "a size below 2g", null);
    }
    return (int) v;
  }

  /**
   * A duration in Spark's notation ({@code 30s}, {@code 500ms}, {@code 2min}, {@code 1h}), as
   * Spark's own time settings take it. A bare number is milliseconds, as in Spark; for a
   * timeout below a second that is rarely meant, so it is warned about once.
   */
  private Duration duration(GpuDirectOption o) {
    String v = get(o);
    long ms;
    try {
      ms = SparkNotation.millis(v);
    } catch (RuntimeException e) {
      throw invalid(o, "a duration such as 30s, 500ms or 2min", e);
    }
    if (o.isTimeout() && ms < 1000 && v.chars().allMatch(Character::isDigit)) {
      String warning = "Option " + o.key() + "=" + v + " has no unit and is read as " + v
          + " ms; write " + v + "s for seconds, or " + v + "ms to keep milliseconds";
      if (WARNED.add(warning)) {
        LOG.warn(warning);
      }
    }
    return Duration.ofMillis(ms);
  }

  private boolean bool(GpuDirectOption o) {
    String v = get(o).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw invalid(o, "true or false", null);
    }
    return Boolean.parseBoolean(v);
  }

  /** Option {@code transport}, checked here so that a misspelt one fails where the options are resolved. */
  private String transport() {
    String v = get(GpuDirectOption.TRANSPORT).toLowerCase(Locale.ROOT);
    if (!Set.of("auto", "tcp", "rdma").contains(v)) {
      throw invalid(GpuDirectOption.TRANSPORT, "auto, tcp or rdma", null);
    }
    return v;
  }

  /**
   * Option {@code rdma.provider}, checked here but kept by name: the block client chooses and
   * opens the provider. Blank is auto, as the client takes it; ResolvedOptionsTest keeps these
   * names in step with the client's.
   */
  private String rdmaProvider() {
    String v = get(GpuDirectOption.RDMA_PROVIDER).toLowerCase(Locale.ROOT);
    if (v.isEmpty()) {
      return "auto";
    }
    if (!Set.of("auto", "ucx", "disni").contains(v)) {
      throw invalid(GpuDirectOption.RDMA_PROVIDER, "auto, ucx or disni", null);
    }
    return v;
  }

  private String trustStore() {
    String trust = get(GpuDirectOption.TLS_TRUST_STORE);
    if (!trust.isEmpty() && !bool(GpuDirectOption.TLS)) {
      throw new GpuDirectException("tls.trustStore is set (" + trust + ") but tls is not: set"
          + " tls=true to encrypt, or drop tls.trustStore (session keys " + confPrefix + "tls and "
          + confPrefix + "tls.trustStore)");
    }
    return trust;
  }

  private GpuDirectException invalid(GpuDirectOption o, String expected, Throwable cause) {
    return new GpuDirectException("Invalid value '" + get(o) + "' for option " + o.key()
        + " (session key " + confPrefix + o.key() + "): expected " + expected, cause);
  }
}
