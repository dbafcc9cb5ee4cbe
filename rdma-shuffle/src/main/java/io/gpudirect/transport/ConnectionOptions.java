package io.gpudirect.transport;

import java.time.Duration;

/**
 * What a {@link Transport} needs to open one connection. {@code secret} may be null (no
 * authentication); it is used for the handshake only and never sent. {@code checksums} asks
 * for a CRC32C on every payload.
 */
public record ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName, boolean checksums) {
  public ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName) {
    this(secret, connectTimeout, threadName, true);
  }
}
