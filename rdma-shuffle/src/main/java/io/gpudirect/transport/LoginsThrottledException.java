package io.gpudirect.transport;

/**
 * The server refused to check this client's secret: the client's address has failed to log in
 * too often and is backing off. Says nothing of the secret; retrying before the wait the message
 * names is over only meets the same refusal, so it is not retried.
 */
public class LoginsThrottledException extends AuthenticationException {
  public LoginsThrottledException(String message) {
    super(message);
  }
}
