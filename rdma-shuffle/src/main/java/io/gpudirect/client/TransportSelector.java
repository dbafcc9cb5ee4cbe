package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.rdma.RdmaTransport;
import io.gpudirect.transport.tcp.TcpTransport;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.TcpFallbackNotice;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.util.Locale;
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
 *       JVM). UCX over TCP is never taken: gpudirect's TCP path is faster;</li>
 *   <li>the server does not serve RDMA, or no RDMA route to it: TCP (decided by the client
 *       on its first connection, with {@link Selection#fallback()});</li>
 *   <li>GPU memory cannot be registered (no nvidia-peermem): RDMA into registered pinned
 *       host chunks, then a copy to the GPU (decided by the client on its first device read).</li>
 * </ol>
 * {@code transport=rdma} never falls back: it fails saying what is missing and how to install it.
 */
public final class TransportSelector {
  private static final Logger LOG = LoggerFactory.getLogger(TransportSelector.class);

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
  /** Null: {@link ClientContext#shared()}, as it is when a transport is chosen. */
  private final ClientContext context;

  /**
   * {@code verbs} opens the RDMA verbs or throws {@link RdmaUnavailableException}; the
   * transports chosen use the JVM's {@link ClientContext#shared()}.
   */
  public TransportSelector(Supplier<Verbs> verbs) {
    this(verbs, null);
  }

  /** As {@link #TransportSelector(Supplier)}, the transports chosen using {@code context}. */
  public TransportSelector(Supplier<Verbs> verbs, ClientContext context) {
    this(rdmaOnly -> {
      Verbs v = verbs.get();
      return new RdmaProvider.Opened(v, v.describe());
    }, context);
  }

  private TransportSelector(Function<Boolean, RdmaProvider.Opened> verbs, ClientContext context) {
    this.verbs = verbs;
    this.context = context;
  }

  /** Chooses with {@code provider} ({@code rdma.provider}), in the JVM's shared context. */
  public static TransportSelector of(RdmaProvider provider) {
    return of(provider, null);
  }

  /** Chooses with {@code provider}, the transports chosen using {@code context} (null: the shared one). */
  public static TransportSelector of(RdmaProvider provider, ClientContext context) {
    return new TransportSelector(provider::open, context);
  }

  public static Selection select(String requested) {
    return DEFAULT.choose(requested);
  }

  public Selection choose(String requested) {
    String mode = requested == null ? "auto" : requested.trim().toLowerCase(Locale.ROOT);
    ConnectionThreads threads = context().connectionThreads();
    BufferAllocator memory = context().memory();
    return switch (mode) {
      case "auto" -> {
        try {
          // RDMA transports only: UCX over TCP is slower than our TCP path, and is not RDMA.
          RdmaProvider.Opened o = verbs.apply(true);
          String reason = "transport=auto chose RDMA (" + o.reason() + ")";
          logOnce(reason);
          yield new Selection(rdma(o.verbs(), memory, threads), reason, new TcpTransport(threads, memory));
        } catch (RdmaUnavailableException e) {
          TcpFallbackNotice.say(e);
          yield new Selection(new TcpTransport(threads, memory), "transport=auto chose TCP: " + e.summary()
              + "; see gpudirect doctor");
        }
      }
      case "tcp" -> new Selection(new TcpTransport(threads, memory), "transport=tcp requested");
      case "rdma" -> {
        try {
          // A forced choice runs over whatever UCX has, and the transport's name says which.
          RdmaProvider.Opened o = verbs.apply(false);
          RdmaTransport rdma = rdma(o.verbs(), memory, threads);
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

  private static RdmaTransport rdma(Verbs verbs, BufferAllocator memory, ConnectionThreads threads) {
    return new RdmaTransport(verbs, RdmaTransport.DEFAULT_CREDITS, memory, threads);
  }

  /**
   * Logs a step of the fallback ladder the first time its reason is seen in this selector's
   * context (the JVM's, for Spark executors and the CLI).
   */
  public void logOnce(String message) {
    if (context().firstFallback(message)) {
      LOG.info("{}", message);
    }
  }

  private ClientContext context() {
    return context != null ? context : ClientContext.shared();
  }
}
