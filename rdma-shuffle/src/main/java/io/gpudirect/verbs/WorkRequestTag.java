package io.gpudirect.verbs;

/**
 * What a work request was, carried in the top byte of its 64-bit id, with the control slot (or
 * the chunk of a WRITE) below it. Both sides of the RDMA protocol tag their requests so, and read
 * back from a completion what it ended and where: a flushed completion may not know its opcode,
 * and a receive of RDMA_BIND must be told from an ordinary receive.
 */
public enum WorkRequestTag {
  /** A receive posted in a control slot. */
  RECV("receive in slot "),
  /** A SEND of a control message from a send slot. */
  SEND("SEND from slot "),
  /** An RDMA WRITE from a registered chunk into the peer's memory. */
  WRITE("RDMA WRITE from chunk "),
  /** The one receive an unbound queue pair gets, for its RDMA_BIND. */
  BIND("receive of RDMA_BIND in slot ");

  private static final int SHIFT = 56;
  /** The bits of an id below the tag: the slot or chunk. */
  public static final long SLOT_MASK = (1L << SHIFT) - 1;
  private static final WorkRequestTag[] TAGS = values();

  private final String words;

  WorkRequestTag(String words) {
    this.words = words;
  }

  /** The id of a request of this kind in {@code slot} (a control slot, or a WRITE's chunk). */
  public long id(int slot) {
    if (slot < 0) {
      throw new IllegalArgumentException("slot " + slot + " of a " + this + " work request");
    }
    // Tags start at 1, so that an id of 0 (a provider's default) is never taken for a receive.
    return ((long) (ordinal() + 1) << SHIFT) | slot;
  }

  /** The tag of {@code wrId}; null for an id no side of this protocol made. */
  public static WorkRequestTag of(long wrId) {
    long tag = wrId >>> SHIFT;
    return tag >= 1 && tag <= TAGS.length ? TAGS[(int) tag - 1] : null;
  }

  /** The slot (or chunk) of {@code wrId}. */
  public static int slot(long wrId) {
    return (int) (wrId & SLOT_MASK);
  }

  /** {@code wrId} in words for a log line or an error: "SEND from slot 3". */
  public static String describe(long wrId) {
    WorkRequestTag tag = of(wrId);
    return tag == null ? "work request 0x" + Long.toHexString(wrId) : tag.words + slot(wrId);
  }
}
