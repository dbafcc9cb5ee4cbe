package io.gpudirect.transport.rdma;

/**
 * One completed work request. {@code byteLength} is meaningful for receives. {@code detail}
 * carries what the provider said (vendor error, the double's reason) for error messages.
 */
public record WorkCompletion(long wrId, Opcode opcode, Status status, int byteLength, String detail) {
  /** What the work request was. A flushed one may not know; then it is {@code UNKNOWN}. */
  public enum Opcode { SEND, RECV, RDMA_WRITE, UNKNOWN }

  /** {@code ibv_wc_status}, the ones this transport tells apart. */
  public enum Status {
    SUCCESS,
    /** The peer refused the access: bad rkey, out of its region's bounds, or no remote write. */
    REMOTE_ACCESS_ERROR,
    /** A local buffer was not registered (lkey) or too small. */
    LOCAL_PROTECTION_ERROR,
    LOCAL_LENGTH_ERROR,
    /** The queue pair is in error (an earlier failure, or a disconnect): the request never ran. */
    FLUSHED,
    /** The peer stopped answering (transport retries exceeded): it died or the link is down. */
    RETRY_EXCEEDED,
    /** The peer had no receive posted for a SEND, for longer than the RNR retries allow. */
    RECEIVER_NOT_READY,
    OTHER
  }

  public boolean ok() {
    return status == Status.SUCCESS;
  }
}
