package io.gpudirect.verbs.ucx;

import io.gpudirect.verbs.RdmaUnavailableException;
import java.util.List;

/**
 * What {@code gpudirect doctor} says about UCX on this host.
 *
 * @param missing why libucp does not load, or null when it does
 * @param version UCX's version, e.g. "1.13.1"
 * @param transports the transports this UCX has (built in and plugin modules)
 * @param rdma why UCX has no RDMA transport here, or null when it has one (verbs on a device)
 * @param cudaMemory whether this UCX maps GPU memory (built with CUDA)
 */
public record UcxReport(String missing, String version, List<String> transports, String rdma, boolean cudaMemory) {
  /** This host, as gpudirect's UCX provider sees it. */
  public static UcxReport probe() {
    String missing = UcxLibrary.unavailableReason();
    if (missing != null) {
      return new UcxReport(missing, "", List.of(), missing, false);
    }
    String rdma;
    try {
      UcxVerbs.openRdmaOnly();
      rdma = null;
    } catch (RdmaUnavailableException e) {
      rdma = e.reason();
    }
    boolean cuda;
    try {
      cuda = UcxVerbs.open().cudaMemory();
    } catch (RdmaUnavailableException e) {
      cuda = false;
    }
    return new UcxReport(null, UcxLibrary.version(), UcxLibrary.transports(), rdma, cuda);
  }

  /** A host without libucp. */
  public static UcxReport absent(String why) {
    return new UcxReport(why, "", List.of(), why, false);
  }
}
