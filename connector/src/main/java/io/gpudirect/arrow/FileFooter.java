package io.gpudirect.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;

/**
 * Reads the footer of an Arrow IPC file and checks every block it lists against the file
 * before anything trusts it: the layout is {@code ARROW1\0\0 <messages> <footer>
 * <int32 footer length> ARROW1}, and each block (offset, metadata length, body length)
 * must lie inside the messages part. Arrow Java reads the footer again when its reader
 * initializes; the planner's batch sizes come from this copy.
 */
public final class FileFooter {
  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);
  /** The leading magic, padded to 8 bytes. */
  private static final int HEADER_LENGTH = 8;
  /** The footer length and the trailing magic. */
  private static final int TRAILER_LENGTH = 4 + MAGIC.length;

  private FileFooter() {}

  public static ArrowFooter read(SeekableByteChannel channel, long size, String displayName) throws IOException {
    if (size < HEADER_LENGTH + TRAILER_LENGTH) {
      throw new ArrowFormatException(displayName,
          "it is " + size + " bytes, too short for an Arrow IPC file (is it a stream? use the stream format)");
    }
    ByteBuffer head = readAt(channel, 0, MAGIC.length, displayName);
    ByteBuffer trailer = readAt(channel, size - TRAILER_LENGTH, TRAILER_LENGTH, displayName);
    if (!hasMagic(head, 0) || !hasMagic(trailer, 4)) {
      throw new ArrowFormatException(displayName,
          "no ARROW1 magic at its start and end, so it is not an Arrow IPC file"
              + " (an Arrow IPC stream needs the stream format)");
    }
    int footerLength = trailer.order(ByteOrder.LITTLE_ENDIAN).getInt(0);
    long footerStart = size - TRAILER_LENGTH - (long) footerLength;
    if (footerLength <= 0 || footerStart < HEADER_LENGTH) {
      throw new ArrowFormatException(displayName,
          "its footer length " + footerLength + " does not fit in the file of " + size + " bytes");
    }
    ByteBuffer footerBytes = readAt(channel, footerStart, footerLength, displayName);
    ArrowFooter footer = new ArrowFooter(Footer.getRootAsFooter(footerBytes));
    checkBlocks(footer.getDictionaries(), "dictionary batch", footerStart, displayName);
    checkBlocks(footer.getRecordBatches(), "record batch", footerStart, displayName);
    return footer;
  }

  /**
   * Reads the metadata of a (size-checked) block and checks it with {@link MessageCheck}
   * before Arrow Java reads the block. The metadata is {@code [0xFFFFFFFF] <int32 length>
   * <flatbuffer Message> <padding>}.
   */
  public static void checkBlockMessage(SeekableByteChannel channel, ArrowBlock block, String where, String displayName)
      throws IOException {
    readBlockMessage(channel, block, where, displayName);
  }

  /** {@link #checkBlockMessage}, returning the checked message. */
  public static Message readBlockMessage(SeekableByteChannel channel, ArrowBlock block, String where, String displayName)
      throws IOException {
    ByteBuffer metadata = readAt(channel, block.getOffset(), block.getMetadataLength(), displayName)
        .order(ByteOrder.LITTLE_ENDIAN);
    int prefix = metadata.remaining() >= 4 && metadata.getInt(0) == -1 ? 8 : 4;
    int length = metadata.remaining() >= prefix ? metadata.getInt(prefix - 4) : -1;
    if (length <= 0 || length > block.getMetadataLength() - prefix) {
      throw new ArrowFormatException(displayName, where + " has a message length of " + length
          + " in its " + block.getMetadataLength() + " bytes of metadata");
    }
    ByteBuffer message = metadata.position(prefix).limit(prefix + length).slice().order(ByteOrder.LITTLE_ENDIAN);
    Message checked = Message.getRootAsMessage(message);
    MessageCheck.checkBatchMessage(checked, block.getBodyLength(), where, displayName);
    return checked;
  }

  private static void checkBlocks(List<ArrowBlock> blocks, String kind, long end, String displayName) {
    for (int i = 0; i < blocks.size(); i++) {
      ArrowBlock block = blocks.get(i);
      long offset = block.getOffset();
      int metadata = block.getMetadataLength();
      long body = block.getBodyLength();
      // Each term is bounded by the file size before adding, so the sum cannot overflow.
      boolean fits = offset >= HEADER_LENGTH && offset <= end
          && metadata > 0 && metadata <= end - offset
          && body >= 0 && body <= end - offset - metadata;
      if (!fits) {
        throw new ArrowFormatException(displayName, "the footer's " + kind + " " + i + " (offset " + offset
            + ", metadata " + metadata + " bytes, body " + body + " bytes) lies outside the "
            + end + " bytes before the footer");
      }
    }
  }

  private static boolean hasMagic(ByteBuffer buffer, int at) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (buffer.get(at + i) != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  public static ByteBuffer readAt(SeekableByteChannel channel, long position, int length, String displayName)
      throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    channel.position(position);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        throw new ArrowFormatException(displayName,
            "it ended at " + (position + buffer.position()) + " while reading " + length + " bytes at " + position);
      }
    }
    buffer.flip();
    return buffer;
  }
}
