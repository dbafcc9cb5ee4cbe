package io.gpudirect.verbs.ucx;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaException;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucs.UcsConstants;
import org.slf4j.LoggerFactory;

/**
 * {@link Verbs} on UCX, through jucx: one-sided puts over whatever transport UCX has to the
 * peer. On an RDMA NIC that is verbs (RC/DC, and into GPU memory with GPUDirect RDMA where UCX
 * is built with CUDA and nvidia-peermem is loaded); elsewhere TCP, which runs the same calls
 * but is not RDMA and is never called that. Shared memory is left out (see {@link #open(Reach)}).
 *
 * <p>Puts are used only where a NIC may carry them. Without an RDMA device on either side, UCX
 * would emulate each put in software, and its receiver aborts the whole process when the
 * acknowledgement of a put fails because the putting peer just died ({@code ucp_put_handler} →
 * {@code ucp_request_try_send: Fatal: unexpected error: Endpoint timeout}; one run in five of
 * {@code RdmaOverUcxFaultsTest}'s kill on UCX 1.13). There the endpoints carry WRITEs on their
 * stream instead ({@link UcxEndpoint}), which fails cleanly. {@code transport=auto} never takes
 * UCX over TCP all the same: our own TCP path is faster there.
 *
 * <p>One UCX context per {@link Reach} per JVM, created on first use and kept, and one worker
 * with its progress thread, shared by the client side and every listener. Two workers in a JVM
 * let strangers abort it on UCX before 1.18: an executor that served and fetched on a worker
 * each died of 30,000 strangers' connections in under 75 s ({@link WorkerLoop}).
 */
public final class UcxVerbs implements Verbs {
  /** Which UCX transports may carry the bytes. */
  public enum Reach {
    /** Whatever UCX picks: verbs where there is a NIC, else TCP or shared memory. */
    ANY,
    /** Verbs transports only (rc, ud, dc): a connection succeeds only over RDMA. */
    RDMA_ONLY
  }

  static final String DEVICE = "load the NIC's RDMA driver (e.g. modprobe mlx5_ib), check with"
      + " ibv_devices, and install UCX with its ib transports (libucx0 / ucx-ib); see docs/deployment.md";
  private static final Map<Reach, UcxVerbs> OPEN = new EnumMap<>(Reach.class);
  /** UCX_TLS from the environment: the user's choice of transports, kept as given. */
  private static final String USER_TLS = System.getenv("UCX_TLS");

  private final Reach reach;
  private final UcpContext context;
  private final boolean cudaMemory;
  private final WritePaths writes;
  private final String version;
  /** Where its endpoints charge their buffers (frames, headers, keys) while open. */
  private final BufferAllocator memory;
  private WorkerLoop loop;

  private UcxVerbs(Reach reach, UcpContext context, String version, boolean forcePuts,
      BufferAllocator memory) {
    this.reach = reach;
    this.memory = memory;
    this.writes = new WritePaths(forcePuts || nativePuts(reach));
    this.context = context;
    this.version = version;
    this.cudaMemory = UcsConstants.MEMORY_TYPE.isMemTypeSupported(context.getMemoryTypesMask(),
        UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_CUDA);
  }

  /** UCX over any transport it has, or {@link RdmaUnavailableException} when libucp does not load. */
  public static UcxVerbs open() {
    return open(Reach.ANY);
  }

  /**
   * UCX restricted to RDMA transports, or {@link RdmaUnavailableException} when it has none here
   * (no libucp, no RDMA device, or a UCX built without its ib transports).
   */
  public static UcxVerbs openRdmaOnly() {
    return open(Reach.RDMA_ONLY);
  }

  public static synchronized UcxVerbs open(Reach reach) {
    UcxVerbs v = OPEN.get(reach);
    if (v != null) {
      return v;
    }
    UcxLibrary.check();
    UcpParams params = new UcpParams().requestRmaFeature().requestStreamFeature()
        .requestWakeupFeature().setMtWorkersShared(true);
    if (reach == Reach.RDMA_ONLY) {
      String devices = UcxLibrary.rdmaDevices();
      if (devices.isEmpty()) {
        // Asking UCX would only print its own warning: without a device it has no verbs.
        throw new RdmaUnavailableException("UCX has no RDMA transport here: no RDMA device"
            + " (/sys/class/infiniband is empty or missing), so it would run over TCP or shared"
            + " memory", DEVICE, null, "UCX has no RDMA transport (no RDMA device)");
      }
      params.setConfig("TLS", "rc,ud,dc");
    } else if (USER_TLS == null) {
      // Transports that can be named: jucx cannot ask which lane UCX chose for an endpoint, and
      // the metrics must say what carried the bytes. Shared memory is left out (client and
      // server share a host only in tests and demos), so without a device this is exactly TCP.
      params.setConfig("TLS", UcxLibrary.rdmaDevices().isEmpty() ? "tcp" : "rc,ud,dc,tcp");
    }
    UcpContext context;
    try {
      context = new UcpContext(params);
    } catch (UcxException | UnsatisfiedLinkError e) {
      throw new RdmaUnavailableException("UCX " + (reach == Reach.RDMA_ONLY
          ? "has no usable verbs transport (rc, ud, dc) on " + UcxLibrary.rdmaDevices() : "cannot start")
          + ": " + e.getMessage(), DEVICE, e, reach == Reach.RDMA_ONLY
          ? "UCX has no RDMA transport" : "UCX cannot start");
    }
    // As the context, for as long as the JVM: its endpoints' buffers go back as each closes.
    v = new UcxVerbs(reach, context, UcxLibrary.version(), false, BufferAllocator.root()
        .newChildAllocator("ucx-" + reach.name().toLowerCase(java.util.Locale.ROOT), Long.MAX_VALUE));
    OPEN.put(reach, v);
    return v;
  }

  public Reach reach() {
    return reach;
  }

  /**
   * Whether a put from or to this side may be carried by a NIC: UCX is limited to verbs, or this
   * host has an RDMA device and UCX_TLS (if set) does not leave verbs out. Where it cannot, UCX
   * would emulate the put in software, which the endpoints avoid (see the class comment).
   */
  static boolean nativePuts(Reach reach) {
    return nativePuts(reach, UcxLibrary.rdmaDevices(), USER_TLS);
  }

  /** {@link #nativePuts(Reach)} given this host's RDMA devices and UCX_TLS (null: not set). */
  static boolean nativePuts(Reach reach, String rdmaDevices, String userTls) {
    if (reach == Reach.RDMA_ONLY) {
      return true;
    }
    if (rdmaDevices.isEmpty()) {
      return false;
    }
    if (userTls == null) {
      return true;
    }
    String tls = userTls.toLowerCase(java.util.Locale.ROOT);
    // "^a,b" is all but a and b: verbs stay in unless a verbs transport is named. When unsure,
    // answer no: stream WRITEs are merely slower on a NIC, software puts can abort the client.
    boolean excluding = tls.startsWith("^");
    for (String t : (excluding ? tls.substring(1) : tls).split(",")) {
      String name = t.trim();
      if (name.equals("ib") || name.startsWith("rc") || name.startsWith("ud") || name.startsWith("dc")) {
        return !excluding;
      }
      if (name.equals("all")) {
        return !excluding;
      }
    }
    return excluding;
  }

  /**
   * For tests: the same UCX context, but its WRITEs are UCX puts even without a NIC (UCX's
   * software puts), so that the put path keeps running on machines without one. Never kill a
   * peer of these: UCX may abort this JVM then (see the class comment).
   */
  UcxVerbs withSoftwarePuts() {
    return new UcxVerbs(reach, context, version, true, memory);
  }

  /** Where its endpoints' buffers are charged. */
  BufferAllocator memory() {
    return memory;
  }

  /** How this side's WRITEs travel, with their counts. */
  WritePaths writes() {
    return writes;
  }

  /** Whether this UCX can map GPU memory (it was built with CUDA): the context's memory types say. */
  public boolean cudaMemory() {
    return cudaMemory;
  }

  @Override
  public boolean registersDeviceMemory() {
    return cudaMemory;
  }

  @Override
  public Wire wire() {
    return Wire.UCX;
  }

  /**
   * What carries the bytes, for metrics. jucx cannot ask an endpoint which lane UCX chose, so
   * the context is restricted to what can be named: verbs only ({@code ucx:verbs}), TCP only
   * where there is no RDMA device ({@code ucx:tcp}), else verbs or TCP, whichever UCX picks per
   * peer. UCX_TLS set in the environment wins, and is named as given.
   */
  @Override
  public String carrier() {
    if (reach == Reach.RDMA_ONLY) {
      return "ucx:verbs";
    }
    if (USER_TLS != null) {
      return "ucx:" + USER_TLS;
    }
    return UcxLibrary.rdmaDevices().isEmpty() ? "ucx:tcp" : "ucx:verbs/tcp";
  }

  @Override
  public String describe() {
    String over = reach == Reach.RDMA_ONLY ? "verbs (" + UcxLibrary.rdmaDevices() + ")"
        : USER_TLS != null ? "UCX_TLS=" + USER_TLS
        : UcxLibrary.rdmaDevices().isEmpty() ? "TCP (no RDMA device, so not RDMA)"
        : "verbs on " + UcxLibrary.rdmaDevices() + " or TCP, as UCX picks";
    return "UCX " + version + " over " + over + (cudaMemory ? ", CUDA memory" : "");
  }

  /** The context's one loop, retained for the caller (who releases it). */
  synchronized WorkerLoop loop() {
    if (loop == null) {
      loop = new WorkerLoop(context, "gpudirect-ucx-" + reach.name().toLowerCase(java.util.Locale.ROOT));
      // It lives as long as the JVM: this reference is never released.
    }
    loop.retain();
    return loop;
  }

  @Override
  public RdmaEndpoint connect(InetSocketAddress server, Duration timeout, QueueSizes sizes,
      EndpointSetup setup) {
    WorkerLoop loop = loop();
    UcxEndpoint e = new UcxEndpoint(loop, context, server, "gpudirect server " + describe(server), sizes,
        writes, true, memory);
    try {
      loop.call(() -> {
        e.bind(loop.worker().newEndpoint(new UcpEndpointParams().setSocketAddress(server)
            .setPeerErrorHandlingMode()
            .setErrorHandler((ep, status, message) -> e.peerFailed(status, message))));
        return null;
      }, timeout);
      e.awaitConnected(timeout);
      e.start(setup.prepare(e));
      return e;
    } catch (RuntimeException ex) {
      e.close();
      if (ex instanceof RdmaException) {
        throw ex;
      }
      throw new RdmaException(RdmaException.Phase.CONNECT, e.peerName(), "UCX: " + ex.getMessage(), ex);
    }
  }

  @Override
  public RdmaListener listen(InetSocketAddress bind, QueueSizes sizes, EndpointSetup setup) {
    warnOfStaleEvents(version);
    WorkerLoop loop = loop();
    try {
      return loop.call(() -> new UcxListener(loop, context, bind, sizes, writes, setup, memory),
          Duration.ofSeconds(30));
    } catch (RuntimeException e) {
      loop.release();
      throw new RdmaException(RdmaException.Phase.CONNECT, "UCX listener on " + describe(bind),
          "cannot listen: " + e.getMessage(), e);
    }
  }

  private static boolean warnedOfStaleEvents;

  /**
   * A listener on UCX before 1.18 can be made to abort the JVM: a peer that opens and drops
   * connections fast leaves events UCX delivers to whichever socket takes the closed one's number
   * next (openucx/ucx#9942, fixed in 1.18), and UCX then fails an assertion. Nothing a caller of
   * UCX does prevents it, so the operator is told once, with what to do.
   */
  private static synchronized void warnOfStaleEvents(String version) {
    if (!warnedOfStaleEvents && before(version, 1, 18)) {
      warnedOfStaleEvents = true;
      LoggerFactory.getLogger(UcxVerbs.class).warn("UCX {} is older than 1.18: a peer that opens and"
          + " drops connections to this RDMA listener quickly can abort this JVM (a UCX bug,"
          + " openucx/ucx#9942). Install UCX 1.18 or later, or keep this listener's port off untrusted"
          + " networks (the TCP transport is not affected); see docs/security.md", version);
    }
  }

  /** Whether {@code version} ("1.13.1") is before major.minor; an unknown version counts as before. */
  static boolean before(String version, int major, int minor) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\.(\\d+)").matcher(version);
    if (!m.lookingAt()) {
      return true;
    }
    int a = Integer.parseInt(m.group(1));
    int b = Integer.parseInt(m.group(2));
    return a < major || (a == major && b < minor);
  }

  static String describe(InetSocketAddress a) {
    if (a == null) {
      return "unknown";
    }
    String host = a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
    return host + ":" + a.getPort();
  }
}
