package io.gpudirect.server;

import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The JMX view of one {@link BlockServer}; registered by {@link #register}, removed by {@link #unregister}. */
final class BlockServerJmx implements BlockServerMXBean {
  private static final Logger LOG = LoggerFactory.getLogger(BlockServerJmx.class);

  private final BlockServer server;
  private ObjectName name;

  private BlockServerJmx(BlockServer server) {
    this.server = server;
  }

  static String objectName(int port) {
    return "io.gpudirect:type=BlockServer,port=" + port;
  }

  /**
   * Registers the server's MBean; a failure (another server of this JVM on the same port of
   * another address) costs only the JMX view, so it is logged, not thrown.
   */
  static BlockServerJmx register(BlockServer server) {
    BlockServerJmx jmx = new BlockServerJmx(server);
    try {
      ObjectName n = new ObjectName(objectName(server.port()));
      ManagementFactory.getPlatformMBeanServer().registerMBean(jmx, n);
      jmx.name = n;
    } catch (JMException | RuntimeException e) {
      LOG.warn("BlockServer on {}: counters not registered with JMX: {}", server.address(), e.toString());
    }
    return jmx;
  }

  /** The registered name, or null when registration failed. */
  String name() {
    return name == null ? null : name.toString();
  }

  void unregister() {
    if (name == null) {
      return;
    }
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    try {
      mbs.unregisterMBean(name);
    } catch (JMException e) {
      LOG.debug("MBean {} was already gone", name);
    }
    name = null;
  }

  @Override
  public String getAddress() {
    return server.address();
  }

  @Override
  public String getRoot() {
    return server.context().servedFiles();
  }

  @Override
  public String getTransports() {
    return server.transports();
  }

  @Override
  public boolean isAuthenticationRequired() {
    return server.context().secret() != null;
  }

  @Override
  public boolean isDraining() {
    return server.isDraining();
  }

  @Override
  public long getBytesSent() {
    return server.stats().bytesSent();
  }

  @Override
  public long getRequests() {
    return server.stats().requests();
  }

  @Override
  public long getErrors() {
    return server.stats().errors();
  }

  @Override
  public long getConnectionsAccepted() {
    return server.stats().connectionsAccepted();
  }

  @Override
  public long getConnectionsActive() {
    return server.stats().connectionsActive();
  }

  @Override
  public long getConnectionsRejected() {
    return server.stats().connectionsRejected();
  }

  @Override
  public long getAuthFailures() {
    return server.stats().authFailures();
  }

  @Override
  public long getReadsInFlight() {
    return server.stats().readsInFlight();
  }

  @Override
  public long getUptimeMillis() {
    return server.stats().uptimeMillis();
  }
}
