package io.gpudirect.verbs;

/**
 * Receives an endpoint's completions, on the endpoint's polling thread, in the order the
 * completion queue yields them (not necessarily the order of posting). It must not block.
 */
public interface CompletionHandler {
  void onCompletion(WorkCompletion completion);

  /** The connection is gone (RDMA CM disconnect, or the peer died); called once. */
  void onDisconnected(String reason);
}
