package io.gpudirect.verbs.provider;

import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.ucx.UcxLibrary;
import io.gpudirect.verbs.ucx.UcxVerbs;
import java.util.List;

/**
 * What {@code gpudirect doctor} says about a verbs provider on this host, in terms any provider
 * has, so that doctor knows no provider's classes.
 *
 * @param missing why the provider's native library does not load, or null when it does
 * @param version the library's version, e.g. "1.13.1" for UCX
 * @param transports the transports the library has (for UCX, built in and plugin modules)
 * @param rdma why the provider has no RDMA transport here, or null when it has one (verbs on a device)
 * @param cudaMemory whether the provider maps GPU memory (UCX built with CUDA)
 */
public record ProviderReport(String missing, String version, List<String> transports, String rdma, boolean cudaMemory) {
  /** UCX on this host, as gpudirect's UCX provider sees it. */
  public static ProviderReport ucx() {
    String missing = UcxLibrary.unavailableReason();
    if (missing != null) {
      return absent(missing);
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
    return new ProviderReport(null, UcxLibrary.version(), UcxLibrary.transports(), rdma, cuda);
  }

  /** A host without the provider's library. */
  public static ProviderReport absent(String why) {
    return new ProviderReport(why, "", List.of(), why, false);
  }
}
