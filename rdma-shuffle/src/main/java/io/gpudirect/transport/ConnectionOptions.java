package io.gpudirect.transport;

import java.time.Duration;

/**
 * What a {@link Transport} needs to open one connection. {@code secret} may be null (no
 * authentication); it is used for the handshake only and never sent.
 */
public record ConnectionOptions(byte[] secret, Duration connectTimeout, String threadName) {}
