package io.gpudirect.verbs;

import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one line a JVM logs when RDMA cannot be used on this host and TCP serves instead: the
 * client's {@code transport=auto} and the server's {@code --rdma auto} both say it, and a demo
 * runs both in one JVM, so it is said once per JVM. How to install RDMA is long and belongs to
 * {@code gpudirect doctor} and to the error of {@code transport=rdma}, not to every command.
 */
public final class TcpFallbackNotice {
  private static final Logger LOG = LoggerFactory.getLogger(TcpFallbackNotice.class);
  private static final AtomicBoolean SAID = new AtomicBoolean();

  private TcpFallbackNotice() {}

  /** Logs {@link #line} at INFO the first time this JVM calls it. */
  public static void say(RdmaUnavailableException why) {
    if (SAID.compareAndSet(false, true)) {
      LOG.info("{}", line(why));
    }
  }

  /** E.g. {@code transport: TCP (no RDMA device; see gpudirect doctor)}. */
  public static String line(RdmaUnavailableException why) {
    return "transport: TCP (" + why.summary() + "; see gpudirect doctor)";
  }
}
