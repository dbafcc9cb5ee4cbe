package io.gpudirect.transport;

/**
 * A connection to a server could not be opened. The reason is kept apart from the message so
 * that a caller that tried several times can say so once, without repeating the server's name.
 */
public class ConnectFailedException extends TransportException {
  private final String server;
  private final String reason;

  public ConnectFailedException(String server, String reason, Throwable cause) {
    this(server, reason, 1, cause);
  }

  private ConnectFailedException(String server, String reason, int attempts, Throwable cause) {
    super("Cannot connect to gpudirect server " + server
        + (attempts > 1 ? " after " + attempts + " attempts" : "") + ": " + reason, cause);
    this.server = server;
    this.reason = reason;
  }

  /** The same failure, told as the last of {@code attempts} tries. */
  public ConnectFailedException afterAttempts(int attempts) {
    return new ConnectFailedException(server, reason, attempts, this);
  }

  /** host:port as dialled. */
  public String server() {
    return server;
  }

  /** Why, and what to check, without the server's name. */
  public String reason() {
    return reason;
  }
}
