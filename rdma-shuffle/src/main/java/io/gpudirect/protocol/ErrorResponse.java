package io.gpudirect.protocol;

import java.nio.ByteBuffer;

/**
 * The server refused a request ({@code requestId}), or the connection ({@code requestId} 0,
 * before or during the handshake). The message is for people: it names the path and why.
 */
public record ErrorResponse(long requestId, ErrorCode code, String message) implements Response {
  /** Request id used for errors about the connection rather than one request. */
  public static final long CONNECTION = 0;

  public ErrorResponse {
    byte[] b = Wire.utf8(message);
    if (b.length > Protocol.MAX_ERROR_MESSAGE_BYTES) {
      message = new String(b, 0, Protocol.MAX_ERROR_MESSAGE_BYTES - 16,
          java.nio.charset.StandardCharsets.UTF_8) + "…";
    }
  }

  @Override
  public MessageType type() {
    return MessageType.ERROR;
  }

  @Override
  public int encodedLength() {
    return 8 + 1 + Wire.stringLength(message);
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.put(code.id());
    Wire.putString(buf, message);
  }

  public static ErrorResponse decode(ByteBuffer buf) {
    long id = buf.getLong();
    ErrorCode code = ErrorCode.fromId(buf.get());
    return new ErrorResponse(id, code,
        Wire.getString(buf, Protocol.MAX_ERROR_MESSAGE_BYTES, "ERROR message"));
  }
}
