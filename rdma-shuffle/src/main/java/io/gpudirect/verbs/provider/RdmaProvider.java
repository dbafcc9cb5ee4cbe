package io.gpudirect.verbs.provider;

import io.gpudirect.GpuDirectException;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.Verbs;
import io.gpudirect.verbs.disni.DisniVerbs;
import io.gpudirect.verbs.ucx.UcxVerbs;
import java.util.Locale;

/**
 * Which verbs provider RDMA runs on ({@code rdma.provider}, {@code --rdma-provider}): UCX
 * (jucx on the OS's libucp) or DiSNI (libdisni on rdma-core). {@link #AUTO} takes UCX when
 * libucp loads and DiSNI otherwise. Client and server both choose here, so they agree on what
 * "auto" means.
 */
public enum RdmaProvider {
  AUTO, UCX, DISNI;

  /** The verbs opened, and why this provider, in words for the log and the scan's metrics. */
  public record Opened(Verbs verbs, String reason) {}

  public static RdmaProvider parse(String value) {
    if (value == null || value.isBlank()) {
      return AUTO;
    }
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException("Unknown rdma.provider '" + value + "': expected auto, ucx or disni");
    }
  }

  /**
   * Opens this provider, or throws {@link RdmaUnavailableException} saying what is missing.
   * {@code rdmaOnly} (transport=auto, server --rdma auto): UCX only with its verbs transports,
   * since UCX over TCP or shared memory is slower than gpudirect's own TCP and is not RDMA.
   * Otherwise (transport=rdma, --rdma on) UCX runs over whatever transport it picks.
   */
  public Opened open(boolean rdmaOnly) {
    return switch (this) {
      case UCX -> {
        Verbs v = ucx(rdmaOnly);
        yield new Opened(v, "rdma.provider=ucx: " + v.describe());
      }
      case DISNI -> {
        Verbs v = DisniVerbs.open();
        yield new Opened(v, "rdma.provider=disni: " + v.describe());
      }
      case AUTO -> {
        try {
          Verbs v = ucx(rdmaOnly);
          yield new Opened(v, "UCX, since libucp loads: " + v.describe());
        } catch (RdmaUnavailableException ucx) {
          try {
            Verbs v = DisniVerbs.open();
            yield new Opened(v, "DiSNI (" + v.describe() + "), since " + ucx.summary());
          } catch (RdmaUnavailableException disni) {
            throw new RdmaUnavailableException("UCX: " + ucx.reason() + "; DiSNI: " + disni.reason(),
                "for UCX, " + ucx.remedy() + "; or for DiSNI, " + disni.remedy(), disni,
                summary(ucx, disni));
          }
        }
      }
    };
  }

  /** Both summaries, or one where it says the other already: without a device both say "no RDMA device". */
  private static String summary(RdmaUnavailableException ucx, RdmaUnavailableException disni) {
    return ucx.summary().contains(disni.summary()) ? ucx.summary() : ucx.summary() + "; " + disni.summary();
  }

  private static Verbs ucx(boolean rdmaOnly) {
    return rdmaOnly ? UcxVerbs.openRdmaOnly() : UcxVerbs.open();
  }
}
