package io.gpudirect.tls;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import javax.net.ssl.SSLException;

/** The peer answered a TLS handshake with something that is not TLS (a plaintext gpudirect peer). */
public final class NotTlsException extends SSLException {
  private static final byte[] GPUDIRECT_MAGIC = {'G', 'P', 'D', 'R'};
  /** Shown in the message: enough to recognise the gpudirect magic, or a protocol's greeting. */
  private static final int SHOWN = 8;
  private final byte[] received;

  NotTlsException(byte[] received) {
    super("the peer does not speak TLS: it sent " + show(Arrays.copyOf(received, Math.min(SHOWN, received.length))));
    this.received = received.clone();
  }

  /** Every byte the peer had sent when TLS gave up: a plaintext gpudirect peer's magic and what followed. */
  public byte[] received() {
    return received.clone();
  }

  /** True when the peer began with the gpudirect protocol's plaintext magic. */
  public boolean isPlaintextGpudirect() {
    if (received.length < GPUDIRECT_MAGIC.length) {
      return received.length > 0 && received[0] == GPUDIRECT_MAGIC[0];
    }
    for (int i = 0; i < GPUDIRECT_MAGIC.length; i++) {
      if (received[i] != GPUDIRECT_MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private static String show(byte[] head) {
    StringBuilder text = new StringBuilder();
    for (byte b : head) {
      text.append(b >= 0x20 && b < 0x7f ? (char) b : '.');
    }
    return "'" + text + "' (" + new String(GPUDIRECT_MAGIC, StandardCharsets.US_ASCII)
        + " is the plaintext gpudirect protocol)";
  }
}
