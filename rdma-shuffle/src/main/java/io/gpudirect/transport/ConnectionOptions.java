package io.gpudirect.transport;

import java.time.Duration;

/**
 * What a {@link Transport} needs to open one connection. {@code secret} may be null (no
 * authentication); it is used for the handshake only and never sent. {@code checksums} asks
 * for a CRC32C on every payload. {@code rdma} offers the RDMA capability in the handshake
 * (the RDMA transport sets it on its control connection).
 */
public record ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums,
    boolean rdma) {
  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName) {
    this(secret, connectTimeout, threadName, true, false);
  }

  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums) {
    this(secret, connectTimeout, threadName, checksums, false);
  }

  public ConnectionOptions withRdma(boolean offer) {
    return new ConnectionOptions(secret, connectTimeout, threadName, checksums, offer);
  }
}
