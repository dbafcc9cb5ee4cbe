package io.gpudirect.protocol;

import java.io.EOFException;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;

/** Frame codec: {@code length:int32, type:int8, body}; see {@link Protocol}. */
public final class Frames {
  /** Bytes before the body: the length and the type byte. */
  public static final int HEADER_BYTES = 5;

  private Frames() {}

  /** The whole frame, length prefix included, ready to write (position 0). */
  public static ByteBuffer encode(Message m) {
    int frameLength = HEADER_BYTES + m.encodedLength();
    return encode(m, ByteBuffer.allocate(frameLength), frameLength);
  }

  /**
   * The whole frame, {@code frameLength} bytes ({@link #HEADER_BYTES} + the message's
   * {@code encodedLength()}), written into {@code buf} from position 0, which must have room
   * for it; returns {@code buf}, ready to write.
   */
  public static ByteBuffer encode(Message m, ByteBuffer buf, int frameLength) {
    buf.clear().limit(frameLength);
    buf.putInt(frameLength - HEADER_BYTES + 1);
    buf.put(m.type().id());
    m.encode(buf);
    if (buf.hasRemaining()) {
      throw new IllegalStateException(m.type() + " wrote " + buf.position() + " of "
          + frameLength + " bytes");
    }
    return buf.flip();
  }

  /**
   * Decodes one frame's content (the type byte and the body, without the length prefix). Any
   * input ends in a message or a {@link ProtocolException} that says what was wrong.
   */
  public static Message decode(ByteBuffer frame) {
    if (!frame.hasRemaining()) {
      throw new ProtocolException("Empty frame: no message type");
    }
    MessageType type = MessageType.fromId(frame.get());
    Message m;
    try {
      m = switch (type) {
        case HELLO -> Hello.decode(frame);
        case HELLO_ACK -> HelloAck.decode(frame);
        case AUTH_RESPONSE -> AuthResponse.decode(frame);
        case AUTH_OK -> AuthOk.decode(frame);
        case LIST -> ListRequest.decode(frame);
        case LIST_RESPONSE -> ListResponse.decode(frame);
        case STAT -> StatRequest.decode(frame);
        case STAT_RESPONSE -> StatResponse.decode(frame);
        case READ -> ReadRequest.decode(frame);
        case READ_DATA -> ReadData.decode(frame);
        case ERROR -> ErrorResponse.decode(frame);
        case STATUS -> StatusRequest.decode(frame);
        case STATUS_RESPONSE -> StatusResponse.decode(frame);
        case RDMA_SETUP -> RdmaSetup.decode(frame);
        case RDMA_SETUP_ACK -> RdmaSetupAck.decode(frame);
        case RDMA_BIND -> RdmaBind.decode(frame);
        case RDMA_READ -> RdmaRead.decode(frame);
        case RDMA_READ_DONE -> RdmaReadDone.decode(frame);
      };
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("Truncated " + type + " message", e);
    } catch (ProtocolException e) {
      throw new ProtocolException("Bad " + type + " message: " + e.getMessage(), e);
    }
    if (frame.hasRemaining()) {
      throw new ProtocolException(type + " message has " + frame.remaining()
          + " unexpected trailing bytes");
    }
    return m;
  }

  /** Checks a frame length prefix before anything is allocated for the frame. */
  public static int checkLength(int length) {
    if (length < 1 || length > Protocol.MAX_FRAME_BYTES) {
      throw new ProtocolException("Frame length " + length + " is outside 1.."
          + Protocol.MAX_FRAME_BYTES);
    }
    return length;
  }

  /**
   * Reads one frame from a blocking channel and decodes it. Throws {@link EOFException} when
   * the stream ends cleanly before a frame starts, and {@link ProtocolException} when it ends
   * inside one or the frame is invalid.
   */
  public static Message read(ReadableByteChannel in) throws IOException {
    ByteBuffer len = ByteBuffer.allocate(4);
    if (!readFully(in, len, true)) {
      throw new EOFException("Stream ended");
    }
    int length = checkLength(len.flip().getInt());
    ByteBuffer frame = ByteBuffer.allocate(length);
    if (!readFully(in, frame, false)) {
      throw new ProtocolException("Stream ended inside a frame of " + length + " bytes");
    }
    return decode(frame.flip());
  }

  /** Fills {@code buf}; false if the stream ended before the first byte when allowed to. */
  public static boolean readFully(ReadableByteChannel in, ByteBuffer buf, boolean eofAtStartOk)
      throws IOException {
    boolean first = true;
    while (buf.hasRemaining()) {
      int n = in.read(buf);
      if (n < 0) {
        if (first && eofAtStartOk) {
          return false;
        }
        throw new EOFException("Stream ended with " + buf.remaining() + " bytes still expected");
      }
      if (n > 0) {
        first = false;
      }
    }
    return true;
  }
}
