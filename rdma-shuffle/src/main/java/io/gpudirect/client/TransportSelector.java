package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.rdma.RdmaTransport;
import io.gpudirect.transport.tcp.TcpTransport;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.TcpFallbackNotice;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the transport for a {@code transport} option value, and says why. The fallback
 * ladder of {@code transport=auto}, each step logged once per reason:
 * <ol>
 *   <li>neither UCX with an RDMA transport (verbs) nor DiSNI here (no libucp, no libdisni, no
 *       RDMA device): TCP (decided here; {@link TcpFallbackNotice} says so in one line per
 *       JVM). UCX over TCP or shared memory is never taken: our TCP path is faster;</li>
 *   <li>the server does not serve RDMA, or no RDMA route to it: TCP (decided by the client
 *       on its first connection, with {@link Selection#fallback()});</li>
 *   <li>GPU memory cannot be registered (no nvidia-peermem): RDMA into registered pinned
 *       host chunks, then a copy to the GPU (decided by the client on its first device read).</li>
 * </ol>
 * {@code transport=rdma} never falls back: it fails saying what is missing and how to install it.
 */
public final class TransportSelector {
  private static final Logger LOG = LoggerFactory.getLogger(TransportSelector.class);
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  /** The default: {@code rdma.provider=auto}, UCX when libucp loads, else DiSNI. */
  public static final TransportSelector DEFAULT = of(RdmaProvider.AUTO);

  /**
   * The transport chosen and the reason, in words, for logs and scan metrics; {@code fallback}
   * is TCP when the choice was RDMA under {@code transport=auto} (null otherwise).
   */
  public record Selection(Transport transport, String reason, Transport fallback) {
    public Selection(Transport transport, String reason) {
      this(transport, reason, null);
    }
  }

  /** Opens verbs: {@code true} asks for RDMA transports only (transport=auto). */
  private final Function<Boolean, RdmaProvider.Opened> verbs;

  /** {@code verbs} opens the RDMA verbs, for either mode, or throws {@link RdmaUnavailableException}. */
  public TransportSelector(Supplier<Verbs> verbs) {
    this.verbs = rdmaOnly -> {
      Verbs v = verbs.get();
      return new RdmaProvider.Opened(v, v.describe());
    };
  }

  private TransportSelector(Function<Boolean, RdmaProvider.Opened> verbs, boolean unused) {
    this.verbs = verbs;
  }

  /** Chooses with {@code provider} ({@code rdma.provider}). */
  public static TransportSelector of(RdmaProvider provider) {
    return new TransportSelector(provider::open, true);
  }

  public static Selection select(String requested) {
    return DEFAULT.choose(requested);
  }

  public Selection choose(String requested) {
    String mode = requested == null ? "auto" : requested.trim().toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "auto" -> {
        try {
          // RDMA transports only: UCX over TCP or shared memory is slower than our TCP path.
          RdmaProvider.Opened o = verbs.apply(true);
          RdmaTransport rdma = new RdmaTransport(o.verbs());
          String reason = "transport=auto chose RDMA (" + o.reason() + ")";
          logOnce(reason);
          yield new Selection(rdma, reason, new TcpTransport());
        } catch (RdmaUnavailableException e) {
          TcpFallbackNotice.say(e);
          yield new Selection(new TcpTransport(), "transport=auto chose TCP: " + e.summary()
              + "; see gpudirect doctor");
        }
      }
      case "tcp" -> new Selection(new TcpTransport(), "transport=tcp requested");
      case "rdma" -> {
        try {
          // A forced choice runs over whatever UCX picks, and the name says which.
          RdmaProvider.Opened o = verbs.apply(false);
          RdmaTransport rdma = new RdmaTransport(o.verbs());
          String reason = "transport=rdma requested (" + o.reason() + "), carried by " + rdma.name();
          logOnce(reason);
          yield new Selection(rdma, reason);
        } catch (RdmaUnavailableException e) {
          throw new GpuDirectException("transport=rdma requested but RDMA is not available: "
              + e.reason() + ". To use RDMA: " + e.remedy() + "; GPU destinations also need the"
              + " nvidia-peermem kernel module (modprobe nvidia-peermem). Or use transport=auto"
              + " (falls back to TCP) or transport=tcp", e);
        }
      }
      default -> throw new GpuDirectException("Unknown transport '" + requested
          + "': expected auto, tcp or rdma");
    };
  }

  /** Logs a step of the fallback ladder the first time its reason is seen in this JVM. */
  public static void logOnce(String message) {
    if (LOGGED.add(message)) {
      LOG.info("{}", message);
    }
  }
}
