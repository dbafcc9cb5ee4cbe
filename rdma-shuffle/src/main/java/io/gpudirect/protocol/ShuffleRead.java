package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * A shuffle block, or a window of one: the server finds the map output's index and data files
 * in the executor's shuffle directories, reads the block's range from the index, and answers
 * with {@link ShuffleData} (the block's length, the data file's version, and up to
 * {@code maxLength} of its bytes from {@code offset} within the block), then the payload and a
 * trailer as READ_DATA's; or with an {@link ErrorResponse} naming the block. So a block of at
 * most {@code maxLength} bytes costs one round trip and no index lookup on the reducer's side;
 * a longer one is read on in further windows, each naming {@code version}, the data file's
 * version from the first answer (the first names {@link FileVersion#ANY}), so that windows of
 * two versions of the map output are never put together.
 */
public record ShuffleRead(long requestId, ShuffleBlockId block, long offset, int maxLength,
    FileVersion version) implements Request {
  @Override
  public MessageType type() {
    return MessageType.SHUFFLE_READ;
  }

  @Override
  public int encodedLength() {
    return 8 + ShuffleBlockId.ENCODED_LENGTH + 8 + 4 + version.encodedLength();
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    block.encode(buf);
    buf.putLong(offset);
    buf.putInt(maxLength);
    version.encode(buf);
  }

  public static ShuffleRead decode(ByteBuffer buf) {
    long id = buf.getLong();
    ShuffleBlockId block = ShuffleBlockId.decode(buf, "SHUFFLE_READ block");
    long offset = Wire.nonNegative(buf.getLong(), "SHUFFLE_READ offset");
    int maxLength = (int) Wire.nonNegative(buf.getInt(), "SHUFFLE_READ maxLength");
    FileVersion version = FileVersion.decode(buf, "SHUFFLE_READ version");
    return new ShuffleRead(id, block, offset, maxLength, version);
  }
}
