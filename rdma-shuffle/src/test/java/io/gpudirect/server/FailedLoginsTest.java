package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.server.peers.RefusalLog;
import io.gpudirect.testing.TestFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A guesser trying wrong secrets as fast as it can, from one address, against a real server on
 * loopback: its guesses are checked at the pace of the backoff, not of its loop; the log has a
 * line or two, not one per guess; a client from another address gets in all along. The
 * backoff runs on a clock the test moves ({@link ManualLoginClock}), {@value #TRIES_PER_STEP}
 * tries per {@code STEP}, so the counts are the same on a quiet machine and a loaded one.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailedLoginsTest {
  static final byte[] SECRET = "failed-logins-test-secret".getBytes(StandardCharsets.UTF_8);
  static final byte[] GUESS = "not-the-secret-but-long-enough".getBytes(StandardCharsets.UTF_8);
  /** 3.5 s of the server's clock in 10 steps: two backoffs (1 s, 2 s) run out within it. */
  static final Duration STEP = Duration.ofMillis(350);
  static final int STEPS = 10;
  static final int TRIES_PER_STEP = 20;

  @Test
  void aGuesserFromOneAddressIsBackedOffAndLoggedInAggregateWhileOthersGetIn(@TempDir Path root)
      throws Exception {
    byte[] data = TestFiles.write(root.resolve("f.bin"), 10_000, 4);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    ManualLoginClock clock = new ManualLoginClock();
    int checked = 0;
    int refused = 0;
    long started = System.nanoTime();
    try (BlockServer server = clock.on(BlockServer.builder().root(root).port(0).secret(SECRET)).build().start()) {
      System.setErr(new PrintStream(new TeeStream(log, stderr), true, StandardCharsets.UTF_8));
      try {
        for (int step = 0; step < STEPS; step++) {
          for (int i = 0; i < TRIES_PER_STEP; i++) {
            ErrorResponse e = login("127.0.0.2", server.port(), GUESS);
            if (e.code() == ErrorCode.AUTH_FAILED && e.message().startsWith("Secret rejected by server")) {
              checked++;
            } else if (e.code() == ErrorCode.LOGINS_THROTTLED
                && e.message().startsWith("logins from 127.0.0.2 are refused for another")) {
              refused++;
            } else {
              fail("unexpected answer: " + e.message());
            }
          }
          if (step == STEPS / 2) {
            // Midway, from another address, the right secret gets in.
            assertReads(server, data);
          }
          clock.advance(STEP);
        }

        // Counts, not rates: whatever the loop's speed, the guesses checked are the free ones
        // plus one each time a backoff ran out within the window.
        long window = STEP.toNanos() * STEPS;
        int bound = LoginThrottle.FREE_FAILURES + backoffsEndingWithin(window);
        assertTrue(checked <= bound, checked + " guesses checked in "
            + TimeUnit.NANOSECONDS.toMillis(window) + " ms of the server's clock; the backoff allows " + bound);
        assertTrue(checked > LoginThrottle.FREE_FAILURES, checked + " guesses checked: no backoff ran out");

        // The right secret from the backed-off address waits like any guess; from another gets in.
        // Tried at the start of a backoff: the clock moves until a guess is checked again.
        while (!login("127.0.0.2", server.port(), GUESS).message().startsWith("Secret rejected by server")) {
          refused++;
          clock.advance(STEP);
        }
        checked++;
        ErrorResponse same = login("127.0.0.2", server.port(), SECRET);
        assertEquals(ErrorCode.LOGINS_THROTTLED, same.code(), same.message());
        assertTrue(same.message().matches("logins from 127\\.0\\.0\\.2 are refused for another \\d+ s"
            + " after \\d+ failed logins from that address"), same.message());
        refused++;
        assertReads(server, data);
        server.logSummaries();
      } finally {
        System.setErr(stderr);
      }
    }
    // A line for the first failure and one for the summary the test asks for at its end, and
    // one for each summary the server's own timer wrote meanwhile (every SUMMARY_INTERVAL of
    // real time: more of them on a slow machine, each with its share of the counts).
    long timerSummaries = 1 + (System.nanoTime() - started) / RefusalLog.SUMMARY_INTERVAL.toNanos();
    List<String> lines = log.toString(StandardCharsets.UTF_8).lines()
        .filter(l -> l.contains("127.0.0.2")).toList();
    assertTrue(lines.size() <= 2 + timerSummaries, (checked + refused) + " tries, " + lines.size()
        + " log lines about them:\n" + String.join("\n", lines));
    Matcher summary = Pattern.compile("(\\d+) failed and (\\d+) refused logins from 127\\.0\\.0\\.2 on ")
        .matcher(String.join("\n", lines));
    int summedFailed = 0;
    int summedRefused = 0;
    while (summary.find()) {
      summedFailed += Integer.parseInt(summary.group(1));
      summedRefused += Integer.parseInt(summary.group(2));
    }
    assertEquals(checked - 1, summedFailed, "the failures after the first, summed up:\n" + String.join("\n", lines));
    assertEquals(refused, summedRefused, String.join("\n", lines));
  }

  /** How many backoffs, one after another from the first, fit in {@code window}. */
  static int backoffsEndingWithin(long window) {
    int n = 0;
    long elapsed = 0;
    for (long failures = LoginThrottle.FREE_FAILURES; ; failures++) {
      elapsed += LoginThrottle.backoffNanos(failures);
      if (elapsed > window) {
        return n;
      }
      n++;
    }
  }

  /** One login from {@code from} proving {@code secret}; the server's refusal. */
  private static ErrorResponse login(String from, int port, byte[] secret) {
    Message m = LoginTries.login(from, port, secret);
    assertTrue(m instanceof ErrorResponse, "a wrong or refused login is answered with an error: " + m);
    return (ErrorResponse) m;
  }

  private static void assertReads(BlockServer server, byte[] data) {
    try (BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", server.port()),
        ClientConfig.builder().secret(SECRET).streams(1).maxRetries(0)
            .connectTimeout(Duration.ofSeconds(5)).build())) {
      ByteBuffer dst = ByteBuffer.allocate(data.length);
      c.read("f.bin", 0, dst);
      assertArrayEquals(data, dst.array());
    }
  }

  /** Keeps what the server logs (slf4j-simple writes to System.err) and still shows it. */
  static final class TeeStream extends java.io.OutputStream {
    private final java.io.OutputStream a;
    private final java.io.OutputStream b;

    TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) throws IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
