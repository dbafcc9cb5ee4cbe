package io.gpudirect.verbs;

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

  /** The failure in words, for the error that names the peer and the phase. */
  public String describe() {
    String what = switch (status) {
      case FLUSHED -> "work request flushed: the queue pair broke earlier (a failed RDMA WRITE into"
          + " this client's memory, or a disconnect), so nothing outstanding on it can finish";
      case REMOTE_ACCESS_ERROR -> "remote access error: the peer refused the key, bounds or access"
          + " rights of the memory named";
      case RETRY_EXCEEDED -> "the server stopped acknowledging (transport retries exceeded): it died"
          + " or the link is down";
      case RECEIVER_NOT_READY -> "the peer had no receive posted (RNR retries exceeded)";
      case LOCAL_PROTECTION_ERROR -> "local protection error: a buffer is not registered (lkey)";
      case LOCAL_LENGTH_ERROR -> "local length error: a message did not fit its receive buffer";
      default -> "work completion status " + status;
    };
    return (opcode == Opcode.UNKNOWN ? "" : opcode + ": ") + what + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")");
  }
}
