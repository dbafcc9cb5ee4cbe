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

  @Test
  void craftedKeysAreRefusedSayingWhatIsWrong() {
    assertRefused(UcxFrames.explodingKey(), "64 memory domains");
    assertRefused(new byte[5], "a packed key of 5 bytes");
    assertRefused(UcxFrames.wellFormedKey(33, 1, (byte) 0), "33 memory domains");
    byte[] noDomains = UcxFrames.wellFormedKey(1, 4, (byte) 0);
    java.util.Arrays.fill(noDomains, 0, 8, (byte) 0);
    assertRefused(noDomains, "0 memory domains");
    byte[] badType = UcxFrames.wellFormedKey(2, 4, (byte) 0);
    badType[8] = (byte) 200;
    assertRefused(badType, "memory type 200");
    byte[] overrun = UcxFrames.wellFormedKey(3, 8, (byte) 0);
    overrun[9 + 9] = (byte) 0xff; // the second domain claims 255 bytes
    assertRefused(overrun, "domain 2 of 3 claims 255 bytes past its end");
    byte[] cut = java.util.Arrays.copyOf(UcxFrames.wellFormedKey(3, 8, (byte) 0), 9 + 9 + 9);
    assertRefused(cut, "ends inside domain 3 of 3");
    byte[] tail = java.util.Arrays.copyOf(UcxFrames.wellFormedKey(1, 8, (byte) 0), 9 + 9 + 300);
    assertRefused(tail, "300 bytes after its 1 domains");
    assertRefused(new byte[PackedRemoteKey.MAX_BYTES + 1], "4097 bytes");
  }

  @Test
  void aRealKeyWithAnyByteChangedIsAcceptedOnlyWhenItsLayoutStillHolds() {
    java.util.Random random = new java.util.Random(28);
    byte[] real = new byte[realKey.remaining()];
    realKey.duplicate().get(real);
    for (int i = 0; i < 100_000; i++) {
      byte[] k = real.clone();
      k[random.nextInt(k.length)] = (byte) random.nextInt();
      try {
        PackedRemoteKey p = PackedRemoteKey.check(ByteBuffer.wrap(k));
        assertTrue(withinLayout(k), "accepted a key whose domains leave it: " + java.util.HexFormat.of().formatHex(k));
        assertEquals(k.length, p.length());
      } catch (IllegalArgumentException refused) {
        assertTrue(refused.getMessage().startsWith("a packed key"), refused.getMessage());
      }
    }
  }

  /** The layout, walked independently of the class under test. */
  private static boolean withinLayout(byte[] k) {
    ByteBuffer b = ByteBuffer.wrap(k).order(ByteOrder.nativeOrder());
    int at = 9;
    for (int d = 0; d < Long.bitCount(b.getLong(0)); d++) {
      if (at >= k.length) {
        return false;
      }
      at += 1 + Byte.toUnsignedInt(k[at]);
    }
    return at <= k.length;
  }

  private static void assertRefused(byte[] key, String why) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PackedRemoteKey.check(ByteBuffer.wrap(key)));
    assertTrue(e.getMessage().contains(why), e.getMessage() + " (expected: " + why + ")");
  }
}
