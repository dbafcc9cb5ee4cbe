package io.gpudirect.testing;

import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.MessageType;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Frames made by hand with the CRC32C every frame but READ_DATA ends in, as a hostile peer
 * would make them: it can compute a checksum as well as anyone, so the decoder behind the
 * checksum must still refuse what is wrong in the fields.
 */
public final class FrameChecksums {
  private FrameChecksums() {}

  /** {@code content} (type byte and body, position to limit) followed by its CRC32C. */
  public static ByteBuffer sealed(ByteBuffer content) {
    ByteBuffer out = ByteBuffer.allocate(content.remaining() + Frames.CHECKSUM_BYTES);
    out.put(content.duplicate()).putInt(crc(content.duplicate()));
    return out.flip();
  }

  /**
   * Rewrites the last four bytes of {@code frame} (a whole frame, length prefix first) with the
   * CRC32C of the bytes between its prefix and them, unless its type byte is READ_DATA's.
   */
  public static void reseal(byte[] frame) {
    int end = frame.length - Frames.CHECKSUM_BYTES;
    if (end <= 4 || frame[4] == MessageType.READ_DATA.id()) {
      return;
    }
    ByteBuffer.wrap(frame).putInt(end, crc(ByteBuffer.wrap(frame, 4, end - 4)));
  }

  private static int crc(ByteBuffer b) {
    CRC32C crc = new CRC32C();
    crc.update(b);
    return (int) crc.getValue();
  }
}
