package io.gpudirect.tls;

import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLException;

/** The peer answered a TLS handshake with something that is not TLS (a plaintext gpudirect peer). */
public final class NotTlsException extends SSLException {
  private static final byte[] GPUDIRECT_MAGIC = {'G', 'P', 'D', 'R'};
  private final byte[] head;

  NotTlsException(byte[] head) {
    super("the peer does not speak TLS: it sent " + show(head));
    this.head = head.clone();
  }

  /** True when the peer began with the gpudirect protocol's plaintext magic. */
  public boolean isPlaintextGpudirect() {
    if (head.length < GPUDIRECT_MAGIC.length) {
      return head.length > 0 && head[0] == GPUDIRECT_MAGIC[0];
    }
    for (int i = 0; i < GPUDIRECT_MAGIC.length; i++) {
      if (head[i] != GPUDIRECT_MAGIC[i]) {
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
