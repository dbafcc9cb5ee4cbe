package io.gpudirect.protocol;

import java.nio.charset.StandardCharsets;

/**
 * Constants of the gpudirect wire protocol, version 8.
 *
 * <pre>
 * connection := MAGIC(4, each side, first) frame*
 * frame      := length:int32 (what follows it, 1..MAX_FRAME_BYTES) type:int8 body
 *               crc32c:int32 (of type and body; every type but READ_DATA)
 * READ_DATA  := its frame, then exactly READ_DATA.length raw payload bytes (not in length),
 *               then status:int8 (0 good; 1 void, an ERROR for the request follows), then
 *               the payload's CRC32C (int32) when CRC32C was negotiated
 * SHUFFLE_DATA := its frame (checksummed), then payload and trailer as READ_DATA's, the trailer
 *               without CRC32C where the frame carries Spark's partition checksums
 * </pre>
 * All integers are big-endian; strings are int32 byte length + UTF-8.
 */
public final class Protocol {
  /** "GPDR": the first four bytes each side sends, so a foreign peer is recognised at once. */
  public static final byte[] MAGIC = {'G', 'P', 'D', 'R'};
  /**
   * 2: the READ_DATA checksum moved from the header to a trailer after the payload. 3: a LIST
   * page continues after a path (a cursor) rather than at an index; files have versions (STAT
   * and LIST give them, READ and RDMA_READ name them, FILE_CHANGED refuses a READ of another),
   * and the READ_DATA trailer starts with a status byte. 4: every frame but READ_DATA ends in the
   * CRC32C of its type and body, so that an answer damaged on the way is refused as corrupt
   * rather than believed (a size, a version, a capability, an error). 5: a file's version
   * carries its change time (ctime) after its modification time, so that a writer who puts the
   * modification time back after a write in place is still seen; a queue pair's server posts the
   * receives for its credits only once the BIND has proven the peer, and says so in RDMA_BOUND,
   * which the client waits for before its first RDMA_READ; a LIST page names the cursor the next
   * one goes on after, and may end, with none of its entries, among names it does not list (so
   * that a page costs what it passes over); a login refused, unchecked, because its address is
   * backing off after failed logins is told so ({@link ErrorCode#LOGINS_THROTTLED}), not that
   * its secret is wrong. 6: SHUFFLE_READ and SHUFFLE_DATA, a shuffle block named by its shuffle,
   * map and reduce ids and answered from the map output's index and data files, and
   * {@link ErrorCode#CORRUPT_MAP_OUTPUT} for files that cannot be served. 7: RDMA_SHUFFLE_READ
   * and RDMA_SHUFFLE_DONE, a shuffle block's window over the queue pair, its bytes RDMA-written
   * into the client's memory (a peer of version 6 would break the queue pair on them). 8:
   * SHUFFLE_DATA (so RDMA_SHUFFLE_DONE too) ends in Spark's checksums of the reduce partitions
   * the window holds bytes of ({@link PartitionChecksums}), read from the map output's checksum
   * file; with them the trailer carries no CRC32C (RDMA_SHUFFLE_DONE says hasCrc false), so the
   * server reads a block's bytes once (sendfile), and the client checks them in its one pass
   * against the writer's checksums, which catch a map output corrupted on the disk as well.
   */
  public static final int VERSION = 8;

  /** Capability bits exchanged in HELLO / HELLO_ACK; the connection uses their intersection. */
  public static final long CAP_TCP = 1L;
  public static final long CAP_RDMA = 1L << 1;
  public static final long CAP_CRC32C = 1L << 2;
  /**
   * The server's RDMA listener is a UCX one (socket-address wire-up), not RDMA CM. A server sets
   * one of CAP_RDMA and CAP_RDMA_UCX, the one its verbs provider listens with; a client that
   * wants RDMA offers both, so the intersection tells it which the server has.
   */
  public static final long CAP_RDMA_UCX = 1L << 3;

  /** Upper bound of any control frame; checked before the frame's buffer is allocated. */
  public static final int MAX_FRAME_BYTES = 1 << 20;
  /**
   * The largest control slot a queue pair may have (RDMA_SETUP_ACK's slotBytes): a control
   * message is a few hundred bytes, and a client allocates 2 x credits + 1 slots of it.
   */
  public static final int MAX_RDMA_SLOT_BYTES = 1 << 20;
  public static final int MAX_PATH_BYTES = 4096;
  public static final int MAX_ERROR_MESSAGE_BYTES = 8192;
  public static final int NONCE_BYTES = 32;
  public static final int MAC_BYTES = 32;
  public static final int DEFAULT_MAX_READ_LENGTH = 64 << 20;
  /**
   * The smallest maxReadLength a server may announce: a client splits a read into requests of
   * at most that length, and keeps a little state for each, so a server announcing a few bytes
   * could make a client hold millions of them for one read.
   */
  public static final int MIN_MAX_READ_LENGTH = 64 << 10;

  private Protocol() {}

  static String describeBytes(byte[] bytes, int n) {
    StringBuilder hex = new StringBuilder();
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < n; i++) {
      hex.append(String.format("%02x ", bytes[i]));
      text.append(bytes[i] >= 0x20 && bytes[i] < 0x7f ? (char) bytes[i] : '.');
    }
    return hex.toString().trim() + " ('" + text + "')";
  }

  /** Checks the peer's magic; the message names the peer and shows what it sent. */
  public static void checkMagic(byte[] got, int n, String peer) {
    if (n < MAGIC.length || got[0] != MAGIC[0] || got[1] != MAGIC[1] || got[2] != MAGIC[2]
        || got[3] != MAGIC[3]) {
      throw new ProtocolException(peer + " is not a gpudirect peer: it began with "
          + describeBytes(got, n) + " instead of " + new String(MAGIC, StandardCharsets.US_ASCII));
    }
  }
}
