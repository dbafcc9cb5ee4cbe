package io.gpudirect.verbs;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The verbs the RDMA transport needs, and nothing more: reliable-connected queue pairs set up
 * through RDMA CM, memory registration, SEND/RECV for control messages and RDMA WRITE for
 * payloads. {@code verbs.disni.DisniVerbs} implements it on DiSNI (libdisni + rdma-core); tests use a
 * double where there is no RDMA device. Keeping DiSNI behind this seam keeps its C-style
 * names and native loading inside {@code verbs.disni}.
 */
public interface Verbs {
  /** The device or double, in words, for logs and error messages. */
  String describe();

  /**
   * How a client reaches a server's listener: RDMA CM (DiSNI, and the double that stands in
   * for it) or UCX's socket-address wire-up. The two do not talk to each other, so the server
   * says in its handshake which one it listens with ({@code Protocol.CAP_RDMA} or
   * {@code CAP_RDMA_UCX}).
   */
  enum Wire { RDMA_CM, UCX }

  default Wire wire() {
    return Wire.RDMA_CM;
  }

  /**
   * What carries the bytes, for the transport's name in logs and metrics: "rdma" where they
   * travel by RDMA. A provider that may run over something else names it instead (UCX over TCP
   * or shared memory is not RDMA, and is never called that).
   */
  default String carrier() {
    return "rdma";
  }

  /**
   * Whether {@code register} may be given GPU memory. DiSNI tries (and fails without
   * nvidia-peermem); UCX built without CUDA would take a device pointer for host memory, so it
   * says no and the client reads through pinned host memory instead.
   */
  default boolean registersDeviceMemory() {
    return true;
  }

  /**
   * Connects a queue pair to {@code server}. {@code setup} runs after the queue pair exists and
   * before the connection is established: it posts the receives the peer's first SENDs need and
   * returns the handler of this endpoint's completions.
   */
  RdmaEndpoint connect(InetSocketAddress server, Duration timeout, QueueSizes sizes,
      EndpointSetup setup);

  /**
   * Listens for queue pairs on {@code bind} (port 0 picks one). {@code setup} runs for each
   * incoming connection before it is accepted; when it throws, the connection is rejected.
   */
  RdmaListener listen(InetSocketAddress bind, QueueSizes sizes, EndpointSetup setup);

  /** Posts receives on a new endpoint and says who handles its completions. */
  @FunctionalInterface
  interface EndpointSetup {
    CompletionHandler prepare(RdmaEndpoint endpoint);
  }
}
