package io.gpudirect.transport;

import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * What a {@link Transport} needs to open one connection. {@code secret} may be null (no
 * authentication); it is used for the handshake only and never sent. {@code checksums} asks
 * for a CRC32C on every payload. {@code rdma} offers the RDMA capability in the handshake
 * (the RDMA transport sets it on its control connection). {@code tls}, when not null, wraps
 * the connection in TLS with this context's trust (TCP only).
 */
public record ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
    boolean rdma, SSLContext tls) {
  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName) {
    this(secret, connectTimeout, threadName, true, false, null);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums) {
    this(secret, connectTimeout, threadName, checksums, false, null);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
      SSLContext tls) {
    this(secret, connectTimeout, threadName, checksums, false, tls);
  }

  public ConnectionOptions withRdma(boolean offer) {
    return new ConnectionOptions(secret, connectTimeout, threadName, checksums, offer, tls);
  }
}
