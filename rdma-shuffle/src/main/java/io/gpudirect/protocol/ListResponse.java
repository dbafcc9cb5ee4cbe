package io.gpudirect.protocol;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One page of a listing, its entries in {@link ListingOrder}. {@code last} is true on the last
 * page; any other page has at least one entry, and the next one is asked for with the path of
 * its last entry (see {@link ListRequest}). A page always fits one frame.
 */
public record ListResponse(long requestId, List<FileMeta> entries, boolean last)
    implements Response {
  /** Room for everything but the entries in a frame. */
  public static final int PAGE_BYTES = Protocol.MAX_FRAME_BYTES - 64;

  @Override
  public MessageType type() {
    return MessageType.LIST_RESPONSE;
  }

  @Override
  public int encodedLength() {
    int n = 8 + 1 + 4;
    for (FileMeta e : entries) {
      n += e.encodedLength();
    }
    return n;
  }

  /** Bytes {@code entry} adds to a page. */
  public static int entryLength(FileMeta entry) {
    return entry.encodedLength();
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.put((byte) (last ? 1 : 0));
    buf.putInt(entries.size());
    for (FileMeta e : entries) {
      e.encode(buf);
    }
  }

  public static ListResponse decode(ByteBuffer buf) {
    long id = buf.getLong();
    boolean last = Wire.getBoolean(buf, "LIST_RESPONSE last");
    int count = buf.getInt();
    if (count < 0 || (long) count * FileMeta.MIN_ENCODED_LENGTH > buf.remaining()) {
      throw new ProtocolException("LIST_RESPONSE entry count " + count + " does not fit the "
          + buf.remaining() + " bytes left in the frame");
    }
    if (count == 0 && !last) {
      throw new ProtocolException("LIST_RESPONSE has no entries but is not the last page");
    }
    List<FileMeta> entries = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      entries.add(FileMeta.decode(buf));
    }
    return new ListResponse(id, List.copyOf(entries), last);
  }
}
