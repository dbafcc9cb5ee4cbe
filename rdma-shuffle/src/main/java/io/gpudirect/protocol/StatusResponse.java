package io.gpudirect.protocol;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Answer to {@link StatusRequest}: named counters, in the server's order. Names rather than
 * fixed fields, so a server can add a counter without a protocol version; a client prints
 * what it gets.
 */
public record StatusResponse(long requestId, Map<String, Long> counters) implements Response {
  public static final int MAX_COUNTERS = 64;
  public static final int MAX_NAME_BYTES = 64;

  public StatusResponse {
    if (counters.size() > MAX_COUNTERS) {
      throw new IllegalArgumentException("At most " + MAX_COUNTERS + " counters, got " + counters.size());
    }
    counters = Collections.unmodifiableMap(new LinkedHashMap<>(counters));
  }

  @Override
  public MessageType type() {
    return MessageType.STATUS_RESPONSE;
  }

  @Override
  public int encodedLength() {
    int n = 8 + 2;
    for (String name : counters.keySet()) {
      n += Wire.stringLength(name) + 8;
    }
    return n;
  }

  @Override
  public void encode(ByteBuffer buf) {
    buf.putLong(requestId);
    buf.putShort((short) counters.size());
    counters.forEach((name, value) -> {
      Wire.putString(buf, name);
      buf.putLong(value);
    });
  }

  public static StatusResponse decode(ByteBuffer buf) {
    long id = buf.getLong();
    int count = Short.toUnsignedInt(buf.getShort());
    if (count > MAX_COUNTERS) {
      throw new ProtocolException("STATUS_RESPONSE counter count " + count + " is over " + MAX_COUNTERS);
    }
    Map<String, Long> counters = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      String name = Wire.getString(buf, MAX_NAME_BYTES, "STATUS_RESPONSE counter name");
      if (counters.put(name, buf.getLong()) != null) {
        throw new ProtocolException("STATUS_RESPONSE names counter '" + name + "' twice");
      }
    }
    return new StatusResponse(id, counters);
  }
}
