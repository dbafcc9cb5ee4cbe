package io.gpudirect.verbs;

/**
 * Queue pair sizing. A side posts at most {@code sendDepth} sends and writes and keeps at most
 * {@code recvDepth} receives; the completion queue holds both, so it is sized
 * {@code sendDepth + recvDepth} and can never overflow (an overflow would break the queue pair).
 */
public record QueueSizes(int sendDepth, int recvDepth) {
  public QueueSizes {
    if (sendDepth <= 0 || recvDepth <= 0) {
      throw new IllegalArgumentException("queue depths must be positive: send " + sendDepth
          + ", recv " + recvDepth);
    }
  }

  public int completionQueueDepth() {
    return sendDepth + recvDepth;
  }
}
