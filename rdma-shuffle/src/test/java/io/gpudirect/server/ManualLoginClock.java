package io.gpudirect.server;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The clock of a server's failed-login backoff, moved only by the test: a backoff then lasts
 * exactly until the test moves past it, however loaded the machine. Public for the
 * integration tests, which build their servers through {@link #serve}.
 */
public final class ManualLoginClock implements LongSupplier {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);

  @Override
  public long getAsLong() {
    return nanos.get();
  }

  public void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  /** {@code builder} with this clock for its failed logins, and a table of {@code maxNetworks}. */
  public BlockServerBuilder on(BlockServerBuilder builder, int maxNetworks) {
    return builder.loginThrottle(maxNetworks, this);
  }

  /** {@code builder} with this clock for its failed logins. */
  public BlockServerBuilder on(BlockServerBuilder builder) {
    return on(builder, LoginThrottle.MAX_NETWORKS);
  }
}
