package io.gpudirect.options;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The shared secret of option {@code auth.secret}. Deliberately not {@code Serializable}: it
 * must never ride inside a task, a partition or a reader factory. Executors find it where Spark
 * keeps its own secrets, in a conf under a key that {@code spark.redaction.regex} matches
 * ({@code spark.gpudirect.auth.secret}, in the scan's broadcast Hadoop conf), so that Spark's
 * UI, event log and explain show it redacted. Its {@link #toString()} never shows it either.
 */
public final class Secret {
  private static final Secret NONE = new Secret("");

  private final String value;

  private Secret(String value) {
    this.value = value;
  }

  /** The secret in {@code value}; null or empty is no secret. */
  public static Secret of(String value) {
    return value == null || value.isEmpty() ? NONE : new Secret(value);
  }

  public static Secret none() {
    return NONE;
  }

  public boolean isEmpty() {
    return value.isEmpty();
  }

  /** The bytes the client proves knowledge of; null when there is no secret. */
  public byte[] bytes() {
    return isEmpty() ? null : value.getBytes(StandardCharsets.UTF_8);
  }

  /** The secret as written in a conf: only for handing it on under its redacted key. */
  public String reveal() {
    return value;
  }

  /** A SHA-256 digest: tells secrets apart (e.g. as a pool key) without holding one. */
  public String digest() {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(value.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }

  @Override
  public String toString() {
    return isEmpty() ? "Secret(none)" : "Secret(redacted)";
  }
}
