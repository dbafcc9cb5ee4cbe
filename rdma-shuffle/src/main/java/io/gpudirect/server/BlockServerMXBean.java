package io.gpudirect.server;

/**
 * What a running {@link BlockServer} shows through JMX, registered as
 * {@code io.gpudirect:type=BlockServer,port=PORT} on the platform MBean server while it runs.
 * The counters are the ones {@code gpudirect server --status} prints.
 */
public interface BlockServerMXBean {
  /** host:port the server listens on. */
  String getAddress();

  /** The directory served, read-only. */
  String getRoot();

  /** Transports served, comma-separated: "tcp" today. */
  String getTransports();

  boolean isAuthenticationRequired();

  /** True once shutdown began: no new connections, in-flight reads finishing. */
  boolean isDraining();

  long getBytesSent();

  long getRequests();

  long getErrors();

  long getConnectionsAccepted();

  long getConnectionsActive();

  long getConnectionsRejected();

  long getAuthFailures();

  long getReadsInFlight();

  long getUptimeMillis();
}
