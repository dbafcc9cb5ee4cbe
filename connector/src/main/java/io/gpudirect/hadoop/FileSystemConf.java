package io.gpudirect.hadoop;

import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.options.Secret;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;

/**
 * The options a Hadoop conf hands to the gpudirect:// file system, under their session keys
 * ({@code spark.gpudirect.*}): a scan writes the ones it resolved on the driver into the conf
 * it broadcasts, so that Spark's readers on executors reach the servers exactly as the driver
 * did. Only what the file system reads is written, and the secret only under
 * {@code spark.gpudirect.auth.secret}, a key {@code spark.redaction.regex} matches.
 */
public final class FileSystemConf {
  /** The options {@link GpuDirectFileSystem} reads, besides the secret. */
  private static final Set<GpuDirectOption> READ_BY_FILE_SYSTEM = EnumSet.of(
      GpuDirectOption.TRANSPORT, GpuDirectOption.STREAMS, GpuDirectOption.MAX_BYTES_IN_FLIGHT,
      GpuDirectOption.CHUNK_SIZE, GpuDirectOption.CONNECT_TIMEOUT, GpuDirectOption.REQUEST_TIMEOUT,
      GpuDirectOption.MAX_RETRIES, GpuDirectOption.RETRY_BACKOFF, GpuDirectOption.CHECKSUMS,
      GpuDirectOption.TLS, GpuDirectOption.TLS_TRUST_STORE, GpuDirectOption.LISTING_MAX_ENTRIES,
      GpuDirectOption.LISTING_MAX_BYTES, GpuDirectOption.LISTING_TIMEOUT, GpuDirectOption.READ_AHEAD);

  private FileSystemConf() {}

  /** {@code conf} with the gpudirect:// file system and the options it reads, as resolved. */
  public static Configuration set(Configuration conf, ResolvedOptions options) {
    conf.set("fs.gpudirect.impl", GpuDirectFileSystem.class.getName());
    // Our stores are cached by settings; Hadoop's cache would ignore a changed secret.
    conf.setBoolean("fs.gpudirect.impl.disable.cache", true);
    for (GpuDirectOption o : READ_BY_FILE_SYSTEM) {
      conf.set(o.sessionKey(), options.get(o));
    }
    String secretKey = GpuDirectOption.AUTH_SECRET.sessionKey();
    if (options.secret().isEmpty()) {
      conf.unset(secretKey);
    } else {
      conf.set(secretKey, options.secret().reveal());
    }
    return conf;
  }

  /** The secret a conf written by {@link #set} carries. */
  public static Secret secret(Configuration conf) {
    return Secret.of(conf.get(GpuDirectOption.AUTH_SECRET.sessionKey()));
  }
}
