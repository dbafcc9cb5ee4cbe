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
