package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * One protocol message. {@link #encode} writes the body (without the type byte or the frame
 * length); {@link Frames} adds both and decodes by type.
 */
public interface Message {
  MessageType type();

  /** Bytes {@link #encode} writes. */
  int encodedLength();

  void encode(ByteBuffer buf);
}
