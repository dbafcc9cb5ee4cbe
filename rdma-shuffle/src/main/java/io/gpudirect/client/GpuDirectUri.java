package io.gpudirect.client;

import io.gpudirect.GpuDirectException;
import java.io.Serializable;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * A {@code gpudirect://host:port/path} location: a server and a path below its root.
 * The path is kept as the server sees it, without a leading '/'.
 */
public record GpuDirectUri(String host, int port, String path) implements Serializable {
  public static final String SCHEME = "gpudirect";
  public static final int DEFAULT_PORT = 7337;

  public static GpuDirectUri parse(String text) {
    URI uri;
    try {
      uri = new URI(text.trim());
    } catch (URISyntaxException e) {
      throw new GpuDirectException("Cannot read '" + text + "': not a URI (" + e.getMessage()
          + "). Expected gpudirect://HOST:PORT/PATH", e);
    }
    if (!SCHEME.equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
      throw new GpuDirectException("Cannot read '" + text + "': expected gpudirect://HOST:PORT/PATH");
    }
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    return new GpuDirectUri(uri.getHost(), port, stripSlashes(uri.getPath()));
  }

  /** A server given as {@code host:port} (or {@code host}, meaning the default port), with a path. */
  public static GpuDirectUri onServer(String hostPort, String path) {
    String hp = hostPort.trim();
    int colon = hp.lastIndexOf(':');
    try {
      return colon < 0
          ? new GpuDirectUri(hp, DEFAULT_PORT, stripSlashes(path))
          : new GpuDirectUri(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1)), stripSlashes(path));
    } catch (NumberFormatException e) {
      throw new GpuDirectException("Invalid server '" + hostPort + "' in option servers: expected HOST:PORT", e);
    }
  }

  public GpuDirectUri withPath(String newPath) {
    return new GpuDirectUri(host, port, stripSlashes(newPath));
  }

  public String authority() {
    return host + ":" + port;
  }

  private static String stripSlashes(String p) {
    String s = p == null ? "" : p;
    while (s.startsWith("/")) {
      s = s.substring(1);
    }
    return s;
  }

  @Override
  public String toString() {
    return SCHEME + "://" + authority() + "/" + path;
  }
}
