package io.gpudirect.server;

import static io.gpudirect.server.LoginTries.FREE_FAILURES;
import static io.gpudirect.server.LoginTries.failFrom;
import static io.gpudirect.server.LoginTries.login;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.testing.TestFiles;
import io.gpudirect.transport.AuthenticationException;
import io.gpudirect.transport.LoginsThrottledException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The failed-login throttle from a good client's side, against a real server on loopback whose
 * backoff runs on a clock the test moves (so nothing here depends on how fast the machine is):
 * a login with the right secret clears its address's failures; a refused one is told it is
 * throttled and for how long, not that its secret is wrong, and spends no retries on it; and
 * failing from many other addresses does not make the server forget an address backing off.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThrottledLoginsTest {
  static final byte[] SECRET = "throttled-logins-test-secret".getBytes(StandardCharsets.UTF_8);

  @TempDir
  Path root;

  private final ManualLoginClock clock = new ManualLoginClock();

  private BlockServer serve(int maxNetworks) {
    return clock.on(BlockServer.builder().root(root).port(0).secret(SECRET), maxNetworks)
        .build().start();
  }

  @Test
  void theRightSecretGetsInAtOnceAfterAWrongOneAndClearsTheFailuresOfItsAddress() {
    try (BlockServer s = serve(LoginThrottle.MAX_NETWORKS)) {
      int port = s.port();
      assertRejected(login("127.0.0.3", port, LoginTries.WRONG_SECRET));
      assertGetsIn(login("127.0.0.3", port, SECRET));

      // Cleared by that login: another FREE_FAILURES - 1 wrong ones are each checked, not
      // refused, and the right secret still gets in (before: the count went on from 1, the
      // 5th failure started a backoff, and the right secret was refused).
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < FREE_FAILURES - 1; i++) {
          assertRejected(login("127.0.0.3", port, LoginTries.WRONG_SECRET));
        }
        assertGetsIn(login("127.0.0.3", port, SECRET));
      }

      // The FREE_FAILURES-th failure starts a backoff of 1 s: the right secret waits it out, then
      // gets in at once, and clears the failures again: the next wrong one is checked and costs
      // no backoff (before: it was the 6th, and the next right one was refused for 2 s).
      failFrom("127.0.0.3", port, FREE_FAILURES);
      assertThrottled(login("127.0.0.3", port, SECRET), "127.0.0.3", 1, FREE_FAILURES);
      clock.advance(Duration.ofSeconds(1));
      assertGetsIn(login("127.0.0.3", port, SECRET));
      assertRejected(login("127.0.0.3", port, LoginTries.WRONG_SECRET));
      assertGetsIn(login("127.0.0.3", port, SECRET));
    }
  }

  /**
   * The real client, with the right secret, from an address backing off: told that the server
   * is throttling (not that the secret is wrong), for how much longer, and after how many
   * failures; one try, not one per retry; in once the wait is over.
   */
  @Test
  void aThrottledClientIsToldItIsThrottledAndForHowLongAndSpendsNoRetries() throws Exception {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 10_000, 7);
    try (BlockServer s = serve(LoginThrottle.MAX_NETWORKS)) {
      failFrom("127.0.0.1", s.port(), FREE_FAILURES);
      clock.advance(Duration.ofSeconds(1));
      failFrom("127.0.0.1", s.port(), 1); // the 6th: 2 s
      clock.advance(Duration.ofMillis(500));
      long triedBefore = s.stats().authFailures();
      AuthenticationException e = assertThrows(LoginsThrottledException.class, () -> connect(s));
      assertEquals(1, s.stats().authFailures() - triedBefore, "logins tried by a client with 3 retries");
      assertTrue(e.getMessage().startsWith("Gpudirect server 127.0.0.1:" + s.port()
          + " is throttling logins from this client's address, so it did not check the secret"
          + " in the client's secret (spark.gpudirect.auth.secret"), e.getMessage());
      assertTrue(e.getMessage().contains("logins from 127.0.0.1 are refused for another 2 s after"
          + " " + (FREE_FAILURES + 1) + " failed logins from that address"), e.getMessage());
      assertFalse(e.getMessage().contains("is not the one the server was started with"), e.getMessage());

      clock.advance(Duration.ofMillis(1500));
      try (BlockClient c = connect(s)) {
        ByteBuffer dst = ByteBuffer.allocate(data.length);
        c.read("f.bin", 0, dst);
        assertArrayEquals(data, dst.array());
      }
    }
  }

  /**
   * The table of failing addresses is bounded (8 here, 100,000 by default). Failing once from
   * each of 50 other addresses, and 5 times from each of 10 more, to push the attacker's address
   * out of it, does not end its backoff: the table forgets the addresses with the fewest
   * failures first (before: the least recently seen, which was the attacker's, and the right
   * secret from it got in at once).
   */
  @Test
  void failingFromManyOtherAddressesDoesNotFlushTheBackoffOfOne() {
    try (BlockServer s = serve(8)) {
      int port = s.port();
      failFrom("127.0.0.2", port, FREE_FAILURES);
      clock.advance(Duration.ofSeconds(1));
      failFrom("127.0.0.2", port, 1);
      clock.advance(Duration.ofSeconds(2));
      failFrom("127.0.0.2", port, 1); // the 7th: refused for 4 s from now
      for (int i = 10; i < 60; i++) {
        failFrom("127.0.0." + i, port, 1);
      }
      for (int i = 60; i < 70; i++) {
        failFrom("127.0.0." + i, port, FREE_FAILURES);
      }
      assertThrottled(login("127.0.0.2", port, SECRET), "127.0.0.2", 4, FREE_FAILURES + 2);
      clock.advance(Duration.ofSeconds(4));
      assertGetsIn(login("127.0.0.2", port, SECRET));
    }
  }

  private BlockClient connect(BlockServer s) {
    return BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
        ClientConfig.builder().secret(SECRET).streams(1).maxRetries(3)
            .retryBackoff(Duration.ofMillis(1)).build());
  }

  private static void assertGetsIn(Message m) {
    assertInstanceOf(AuthOk.class, m, "the right secret is let in");
  }

  private static void assertRejected(Message m) {
    String message = assertInstanceOf(ErrorResponse.class, m).message();
    assertTrue(message.startsWith("Secret rejected by server"), "checked and rejected: " + message);
  }

  private static void assertThrottled(Message m, String address, int seconds, int failures) {
    ErrorResponse e = assertInstanceOf(ErrorResponse.class, m, "refused while backing off");
    assertEquals(ErrorCode.LOGINS_THROTTLED, e.code(), e.message());
    String message = e.message();
    assertTrue(message.contains("logins from " + address + " are refused for another " + seconds
        + " s after " + failures + " failed logins from that address"), message);
  }
}
