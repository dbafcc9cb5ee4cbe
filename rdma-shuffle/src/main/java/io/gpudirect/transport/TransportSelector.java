package io.gpudirect.transport;

import io.gpudirect.GpuDirectException;
import io.gpudirect.transport.tcp.TcpTransport;
import java.util.Locale;

/** Picks the transport for a {@code transport} option value, and says why. */
public final class TransportSelector {
  /** The transport chosen and the reason, in words, for logs and scan metrics. */
  public record Selection(Transport transport, String reason) {}

  static final String RDMA_UNAVAILABLE =
      "the RDMA transport is not built yet in this version of gpudirect (no transport.rdma,"
          + " libdisni is not loaded)";

  private TransportSelector() {}

  public static Selection select(String requested) {
    String mode = requested == null ? "auto" : requested.trim().toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "auto" -> new Selection(new TcpTransport(),
          "transport=auto chose TCP: " + RDMA_UNAVAILABLE);
      case "tcp" -> new Selection(new TcpTransport(), "transport=tcp requested");
      case "rdma" -> throw new GpuDirectException(
          "transport=rdma requested but RDMA is not available: " + RDMA_UNAVAILABLE
              + "; use transport=auto or transport=tcp");
      default -> throw new GpuDirectException("Unknown transport '" + requested
          + "': expected auto, tcp or rdma");
    };
  }
}
