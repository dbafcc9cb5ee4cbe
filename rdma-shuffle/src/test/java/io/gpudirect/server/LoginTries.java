package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.testing.RawPeer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Logins by hand, from a chosen loopback address (Linux routes all of 127/8 to lo), for tests
 * of the failed-login throttle. Public for the integration tests.
 */
public final class LoginTries {
  /** Failed logins an address may have before its logins are refused for a while. */
  public static final int FREE_FAILURES = LoginThrottle.FREE_FAILURES;
  public static final byte[] WRONG_SECRET = "not-the-secret-but-long-enough".getBytes(StandardCharsets.UTF_8);

  private LoginTries() {}

  /** One login from {@code from} proving {@code secret}; the server's answer to the proof. */
  public static Message login(String from, int port, byte[] secret) {
    try (RawPeer peer = new RawPeer(from, port)) {
      HelloAck ack = peer.handshake();
      peer.send(new AuthResponse(Auth.clientProof(secret, ack.serverNonce(), peer.clientNonce)));
      return peer.receive();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code times} logins from {@code from} with a wrong secret, each refused one way or another. */
  public static void failFrom(String from, int port, int times) {
    for (int i = 0; i < times; i++) {
      Message m = login(from, port, WRONG_SECRET);
      assertTrue(m instanceof ErrorResponse, "a wrong secret got " + m);
    }
  }
}
