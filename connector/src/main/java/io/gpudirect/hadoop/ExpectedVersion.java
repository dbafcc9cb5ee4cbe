package io.gpudirect.hadoop;

import io.gpudirect.protocol.FileVersion;
import org.apache.hadoop.conf.Configuration;

/**
 * The version of one file that a reader's stream must read: the one the driver listed when it
 * planned the scan. It travels to the stream through the Hadoop conf of the reader, as
 * {@link ReadPlan} does (Parquet opens the file itself); a stream of another file ignores it.
 * Without it a stream reads the version it finds when it is opened.
 */
public final class ExpectedVersion {
  /** Conf key: the version's token, then ';' and the file's URI. */
  public static final String CONF_KEY = "gpudirect.internal.fileVersion";

  private ExpectedVersion() {}

  /** Puts the version {@code uri} must have into {@code conf}, replacing any other. */
  public static void set(Configuration conf, String uri, FileVersion version) {
    conf.set(CONF_KEY, version.token() + ";" + uri);
  }

  /** The version in {@code conf} for the file whose qualified URI is {@code qualified}, or null. */
  static FileVersion get(Configuration conf, java.util.function.Function<String, String> qualify,
      String qualified) {
    String v = conf == null ? null : conf.get(CONF_KEY);
    // The token has no ';' (a file key's text has none); the URI may.
    int split = v == null ? -1 : v.indexOf(';');
    if (split < 0 || !qualify.apply(v.substring(split + 1)).equals(qualified)) {
      return null;
    }
    return FileVersion.parse(v.substring(0, split));
  }
}
