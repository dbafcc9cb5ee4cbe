package io.gpudirect.transport;

import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * What a {@link Transport} needs to open one connection. {@code secret} may be null (no
 * authentication); it is used for the handshake only and never sent. {@code checksums} asks
 * for a CRC32C on every payload. {@code rdma} offers the RDMA capability in the handshake
 * (the RDMA transport sets it on its control connection). {@code tls}, when not null, wraps
 * the connection in TLS with this context's trust (TCP only). {@code secretSetting} names
 * where the caller's user sets the secret (a Spark key, a CLI flag), for authentication errors;
 * {@code tlsAdvice} what the user is told to do when a server answers TLS in plaintext.
 */
public record ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
    boolean rdma, SSLContext tls, String secretSetting, String tlsAdvice) {
  /** Said where the caller did not say where its secret is set. */
  public static final String ANY_SECRET_SETTING = "the client's secret (spark.gpudirect.auth.secret"
      + " for Spark; --secret-file or $GPUDIRECT_SECRET_FILE for bin/gpudirect)";
  /**
   * Said, after "it answered in plaintext (...), so ", where the caller did not say how its
   * servers and clients turn TLS on: the CLI's server flags and the read path's option.
   */
  public static final String ANY_TLS_ADVICE = "it was started without --tls-cert/--tls-key. Connect without"
      + " tls=true (CLI: without --tls), or restart the server with TLS";

  public ConnectionOptions {
    if (secretSetting == null) {
      secretSetting = ANY_SECRET_SETTING;
    }
    if (tlsAdvice == null) {
      tlsAdvice = ANY_TLS_ADVICE;
    }
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
      boolean rdma, SSLContext tls, String secretSetting) {
    this(secret, connectTimeout, threadName, checksums, rdma, tls, secretSetting, null);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName) {
    this(secret, connectTimeout, threadName, true, false, null, null);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums) {
    this(secret, connectTimeout, threadName, checksums, false, null, null);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
      SSLContext tls) {
    this(secret, connectTimeout, threadName, checksums, false, tls, null);
  }

  public ConnectionOptions withRdma(boolean offer) {
    return new ConnectionOptions(secret, connectTimeout, threadName, checksums, offer, tls, secretSetting, tlsAdvice);
  }

  public ConnectionOptions withSecretSetting(String setting) {
    return new ConnectionOptions(secret, connectTimeout, threadName, checksums, rdma, tls, setting, tlsAdvice);
  }

  public ConnectionOptions withTlsAdvice(String advice) {
    return new ConnectionOptions(secret, connectTimeout, threadName, checksums, rdma, tls, secretSetting, advice);
  }
}
