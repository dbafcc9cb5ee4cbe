package io.gpudirect.protocol;

import static io.gpudirect.testing.FrameChecksums.sealed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatusResponseTest {
  @Test
  void keepsTheServersOrder() {
    Map<String, Long> counters = new LinkedHashMap<>();
    counters.put("z", 1L);
    counters.put("a", 2L);
    ByteBuffer frame = Frames.encode(new StatusResponse(3, counters));
    frame.getInt();
    StatusResponse back = (StatusResponse) Frames.decode(frame);
    assertEquals(List.of("z", "a"), List.copyOf(back.counters().keySet()));
  }

  @Test
  void hostileCountsAndNamesAreRefused() {
    ByteBuffer tooMany = ByteBuffer.allocate(11).put(MessageType.STATUS_RESPONSE.id()).putLong(1)
        .putShort((short) (StatusResponse.MAX_COUNTERS + 1));
    ProtocolException e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(tooMany.flip())));
    assertTrue(e.getMessage().contains("count"), e.getMessage());

    ByteBuffer longName = ByteBuffer.allocate(15).put(MessageType.STATUS_RESPONSE.id()).putLong(1)
        .putShort((short) 1).putInt(StatusResponse.MAX_NAME_BYTES + 1);
    e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(longName.flip())));
    assertTrue(e.getMessage().contains("counter name"), e.getMessage());

    ByteBuffer twice = ByteBuffer.allocate(11 + 2 * (4 + 1 + 8)).put(MessageType.STATUS_RESPONSE.id())
        .putLong(1).putShort((short) 2).putInt(1).put((byte) 'a').putLong(1).putInt(1).put((byte) 'a').putLong(2);
    e = assertThrows(ProtocolException.class, () -> Frames.decode(sealed(twice.flip())));
    assertTrue(e.getMessage().contains("twice"), e.getMessage());
  }
}
