package io.gpudirect.protocol;

import java.io.EOFException;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.zip.CRC32C;

/**
 * Frame codec: {@code length:int32, type:int8, body, crc32c:int32}; see {@link Protocol}. The
 * CRC32C of the type and body ends every frame but READ_DATA's, whose fields the client checks
 * against its request and whose payload has a checksum of its own.
 */
public final class Frames {
  /** Bytes before the body: the length and the type byte. */
  public static final int HEADER_BYTES = 5;
  /** The CRC32C at the end of a frame (counted in its length). */
  public static final int CHECKSUM_BYTES = 4;

  /** The first protocol version whose frames end in a checksum. */
  private static final int CHECKSUMS_SINCE = 4;
  /** A HELLO's body before {@link #CHECKSUMS_SINCE}: version u16, capabilities u64, nonce. */
  private static final int V3_HELLO_BODY = 2 + 8 + Protocol.NONCE_BYTES;

  private Frames() {}

  /** Whether frames of {@code type} end in a CRC32C: all but READ_DATA. */
  public static boolean checksummed(MessageType type) {
    return type != MessageType.READ_DATA;
  }

  /** The whole frame's length, length prefix and checksum included. */
  public static int frameLength(Message m) {
    return HEADER_BYTES + m.encodedLength() + (checksummed(m.type()) ? CHECKSUM_BYTES : 0);
  }

  /** The whole frame, length prefix included, ready to write (position 0). */
  public static ByteBuffer encode(Message m) {
    int frameLength = frameLength(m);
    return encode(m, ByteBuffer.allocate(frameLength), frameLength);
  }

  /**
   * The whole frame, {@code frameLength} bytes ({@link #frameLength}), written into {@code buf}
   * from position 0, which must have room for it; returns {@code buf}, ready to write.
   */
  public static ByteBuffer encode(Message m, ByteBuffer buf, int frameLength) {
    buf.clear().limit(frameLength);
    buf.putInt(frameLength - 4);
    buf.put(m.type().id());
    m.encode(buf);
    int checksumBytes = checksummed(m.type()) ? CHECKSUM_BYTES : 0;
    if (buf.remaining() != checksumBytes) {
      throw new IllegalStateException(m.type() + " wrote " + (buf.position() + checksumBytes)
          + " of " + frameLength + " bytes");
    }
    if (checksumBytes > 0) {
      buf.putInt(checksum(buf.duplicate().flip().position(4)));
    }
    return buf.flip();
  }

  /**
   * The frame a server refuses a client of another protocol version with: without a checksum,
   * in the layout every version has had, so that the client can read why (see
   * {@link #decode}).
   */
  public static ByteBuffer encodeVersionRefusal(ErrorResponse refusal) {
    int frameLength = HEADER_BYTES + refusal.encodedLength();
    ByteBuffer buf = ByteBuffer.allocate(frameLength);
    buf.putInt(frameLength - 4).put(refusal.type().id());
    refusal.encode(buf);
    return buf.flip();
  }

  private static int checksum(ByteBuffer content) {
    CRC32C crc = new CRC32C();
    crc.update(content);
    return (int) crc.getValue();
  }

  /**
   * Decodes one frame's content (the type byte and the body, without the length prefix). Any
   * input ends in a message or a {@link ProtocolException} that says what was wrong.
   */
  public static Message decode(ByteBuffer frame) {
    if (!frame.hasRemaining()) {
      throw new ProtocolException("Empty frame: no message type");
    }
    MessageType type = MessageType.fromId(frame.get(frame.position()));
    if (checksummed(type)) {
      ByteBuffer checked = checked(frame);
      if (checked == null) {
        Message older = beforeChecksums(type, frame);
        if (older != null) {
          return older;
        }
        throw corrupt(type, frame);
      }
      frame = checked;
      if (type == MessageType.HELLO && frame.remaining() >= 3
          && (frame.getShort(frame.position() + 1) & 0xffff) != Protocol.VERSION) {
        // Another version may lay its HELLO out otherwise: only the version is read, so that
        // the peer is refused by name (UNSUPPORTED_VERSION), not as a broken frame.
        return otherVersion(frame.getShort(frame.position() + 1) & 0xffff);
      }
    }
    frame.get();
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
        case RDMA_BOUND -> RdmaBound.decode(frame);
        case SHUFFLE_READ -> ShuffleRead.decode(frame);
        case SHUFFLE_DATA -> ShuffleData.decode(frame);
        case RDMA_SHUFFLE_READ -> RdmaShuffleRead.decode(frame);
        case RDMA_SHUFFLE_DONE -> RdmaShuffleDone.decode(frame);
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

  /** The frame's content without its checksum, or null when the checksum does not match it. */
  private static ByteBuffer checked(ByteBuffer frame) {
    if (frame.remaining() < 1 + CHECKSUM_BYTES) {
      return null;
    }
    int end = frame.limit() - CHECKSUM_BYTES;
    ByteBuffer content = frame.duplicate().limit(end);
    return checksum(content.duplicate()) == frame.getInt(end) ? content : null;
  }

  private static CorruptFrameException corrupt(MessageType type, ByteBuffer frame) {
    int n = frame.remaining();
    if (n < 1 + CHECKSUM_BYTES) {
      return new CorruptFrameException(type + " frame of " + n + " bytes is too short for its"
          + " CRC32C");
    }
    int end = frame.limit() - CHECKSUM_BYTES;
    return new CorruptFrameException(String.format("CRC32C mismatch in the %s frame of %d bytes: its"
        + " bytes give %08x, its checksum says %08x", type, n,
        checksum(frame.duplicate().limit(end)), frame.getInt(end)));
  }

  /**
   * What a peer of version 3 or earlier sends without a checksum and must still be understood:
   * its HELLO (exactly that layout; only the version is taken), and an UNSUPPORTED_VERSION
   * refusal (see {@link #encodeVersionRefusal}); null for anything else.
   */
  private static Message beforeChecksums(MessageType type, ByteBuffer frame) {
    ByteBuffer b = frame.duplicate();
    b.get();
    if (type == MessageType.HELLO && b.remaining() == V3_HELLO_BODY) {
      int version = b.getShort() & 0xffff;
      return version < CHECKSUMS_SINCE ? otherVersion(version) : null;
    }
    if (type != MessageType.ERROR) {
      return null;
    }
    try {
      ErrorResponse e = ErrorResponse.decode(b);
      return e.code() == ErrorCode.UNSUPPORTED_VERSION && !b.hasRemaining() ? e : null;
    } catch (RuntimeException notOne) {
      return null;
    }
  }

  /** A HELLO of another version, of which the server needs only the version to refuse it. */
  private static Hello otherVersion(int version) {
    return new Hello(version, 0, new byte[Protocol.NONCE_BYTES]);
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
