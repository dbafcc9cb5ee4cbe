package io.gpudirect.protocol;

import io.gpudirect.GpuDirectException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual shared-secret authentication. Both nonces are fresh per connection, so a proof
 * captured on one connection is worthless on the next; the secret never crosses the wire.
 * The two proofs carry different labels so one side's proof cannot be reflected back.
 */
public final class Auth {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte[] CLIENT_LABEL = "gpudirect-v1 client".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SERVER_LABEL = "gpudirect-v1 server".getBytes(StandardCharsets.US_ASCII);

  private Auth() {}

  public static byte[] newNonce() {
    byte[] nonce = new byte[Protocol.NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /** HMAC-SHA256(secret, "…client" || serverNonce || clientNonce). */
  public static byte[] clientProof(byte[] secret, byte[] serverNonce, byte[] clientNonce) {
    return hmac(secret, CLIENT_LABEL, serverNonce, clientNonce);
  }

  /** HMAC-SHA256(secret, "…server" || clientNonce || serverNonce). */
  public static byte[] serverProof(byte[] secret, byte[] serverNonce, byte[] clientNonce) {
    return hmac(secret, SERVER_LABEL, clientNonce, serverNonce);
  }

  /** Constant-time comparison. */
  public static boolean matches(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  private static byte[] hmac(byte[] secret, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      for (byte[] p : parts) {
        mac.update(p);
      }
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new GpuDirectException("HmacSHA256 is not available in this JVM", e);
    }
  }
}
