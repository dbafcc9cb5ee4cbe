package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * Lists every regular file below {@code path}, in {@link ListingOrder}, one page at a time.
 * {@code after} is empty for the first page; for each later one, the cursor of the page before
 * ({@link ListResponse#cursor}, a path relative to the root): the page continues with the first
 * file after it. The server keeps nothing between pages, so a client that never asks for the
 * next page costs it nothing.
 */
public record ListRequest(long requestId, String path, String after) implements Request {
  public static final String FIRST_PAGE = "";

  @Override
  public MessageType type() {
    return MessageType.LIST;
  }

  @Override
  public int encodedLength() {
    return 8 + Wire.stringLength(path) + Wire.stringLength(after);
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    Wire.putString(buf, path);
    Wire.putString(buf, after);
  }

  public static ListRequest decode(ByteBuffer buf) {
    long id = buf.getLong();
    String path = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "LIST path");
    String after = Wire.getString(buf, Protocol.MAX_PATH_BYTES, "LIST cursor");
    return new ListRequest(id, path, after);
  }
}
