package io.gpudirect.protocol;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One page of a listing, its entries in {@link ListingOrder}. {@code last} is true on the last
 * page, whose {@code cursor} is empty; any other names in {@code cursor} where the next one goes
 * on (see {@link ListRequest}): the last path the server passed, which is its last entry's or,
 * where the page ended among names a listing leaves out (symlinks, other special files,
 * directories), one after it. Such a page may have no entries at all. A page always fits one
 * frame.
 */
public record ListResponse(long requestId, List<FileMeta> entries, boolean last, String cursor)
    implements Response {
  /** Room for everything but the entries in a frame. */
  public static final int PAGE_BYTES = Protocol.MAX_FRAME_BYTES - 64 - (4 + Protocol.MAX_PATH_BYTES);

  /** The last page of a listing. */
  public static ListResponse last(long requestId, List<FileMeta> entries) {
    return new ListResponse(requestId, entries, true, "");
  }

  /** A page with more after it, from {@code cursor} on. */
  public static ListResponse more(long requestId, List<FileMeta> entries, String cursor) {
    return new ListResponse(requestId, entries, false, cursor);
  }

  @Override
  public MessageType type() {
    return MessageType.LIST_RESPONSE;
  }

  @Override
  public int encodedLength() {
    int n = 8 + 1 + 4 + Wire.stringLength(cursor);
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
    Wire.putString(buf, cursor);
  }

  public static ListResponse decode(ByteBuffer buf) {
    long id = buf.getLong();
    boolean last = Wire.getBoolean(buf, "LIST_RESPONSE last");
    int count = buf.getInt();
    if (count < 0 || (long) count * FileMeta.MIN_ENCODED_LENGTH > buf.remaining()) {
      throw new ProtocolException("LIST_RESPONSE entry count " + count + " does not fit the "
          + buf.remaining() + " bytes left in the frame");
    }
    List<FileMeta> entries = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      entries.add(FileMeta.decode(buf));
    }
    String cursor = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "LIST_RESPONSE cursor");
    if (last != cursor.isEmpty()) {
      throw new ProtocolException(last ? "LIST_RESPONSE is the last page but names a cursor"
          : "LIST_RESPONSE is not the last page but names no cursor to go on after");
    }
    return new ListResponse(id, List.copyOf(entries), last, cursor);
  }
}
