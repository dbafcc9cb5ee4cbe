package io.gpudirect.protocol;

/** Why the server refused a request; carried in {@link ErrorResponse}. */
public enum ErrorCode {
  NOT_FOUND(1),
  OUTSIDE_ROOT(2),
  NOT_A_FILE(3),
  BAD_REQUEST(4),
  LIMIT_EXCEEDED(5),
  AUTH_FAILED(6),
  IO_ERROR(7),
  UNSUPPORTED_VERSION(8),
  OUT_OF_RANGE(9),
  SHUTTING_DOWN(10),
  /**
   * A READ named a version of the file (from STAT or LIST) that the file no longer has: it was
   * replaced, rewritten, truncated or deleted since. The message names the path and both
   * versions. Not retried: the reader must start again from a new STAT or listing.
   */
  FILE_CHANGED(11),
  /**
   * A login refused without its proof being looked at: the client's address (its IPv6 /64) has
   * failed to log in too often and is backing off. The message says for how much longer, and
   * after how many failures. It says nothing of the client's secret. Not retried.
   */
  LOGINS_THROTTLED(12),
  /**
   * A SHUFFLE_READ found its map output's files unusable: an index that is not (n + 1)
   * big-endian offsets from 0, never decreasing, or whose last offset is not the data file's
   * length (a data file truncated, or missing while the index promises bytes). The message
   * names the block (shuffle, map and reduce ids) and what was wrong. Not retried: the map
   * output must be written again.
   */
  CORRUPT_MAP_OUTPUT(13);

  private final byte id;

  ErrorCode(int id) {
    this.id = (byte) id;
  }

  public byte id() {
    return id;
  }

  public static ErrorCode fromId(byte id) {
    for (ErrorCode c : values()) {
      if (c.id == id) {
        return c;
      }
    }
    throw new ProtocolException("Unknown error code " + (id & 0xff) + " in ERROR message");
  }
}
