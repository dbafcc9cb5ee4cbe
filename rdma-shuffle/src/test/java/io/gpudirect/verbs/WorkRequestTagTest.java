package io.gpudirect.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The ids both sides of the RDMA protocol give their work requests, read back from a completion. */
class WorkRequestTagTest {
  @Test
  void anIdGivesBackItsTagAndSlot() {
    for (WorkRequestTag tag : WorkRequestTag.values()) {
      for (int slot : new int[] {0, 1, 4095, Integer.MAX_VALUE}) {
        long id = tag.id(slot);
        assertEquals(tag, WorkRequestTag.of(id));
        assertEquals(slot, WorkRequestTag.slot(id));
      }
    }
  }

  @Test
  void theWireValuesStayWhatBothSidesUsedBefore() {
    // A completion's id is compared across the client and server classes: the values are the
    // ones each side defined for itself before they met here.
    assertEquals((1L << 56) | 7, WorkRequestTag.RECV.id(7));
    assertEquals((2L << 56) | 7, WorkRequestTag.SEND.id(7));
    assertEquals((3L << 56) | 7, WorkRequestTag.WRITE.id(7));
    assertEquals(4L << 56, WorkRequestTag.BIND.id(0));
  }

  @Test
  void anIdNoSideMadeHasNoTag() {
    assertNull(WorkRequestTag.of(0));
    assertNull(WorkRequestTag.of(5L << 56));
    assertNull(WorkRequestTag.of(-1));
    assertEquals("work request 0x500000000000003", WorkRequestTag.describe((5L << 56) | 3));
  }

  @Test
  void describeSaysWhatAndWhere() {
    assertEquals("SEND from slot 3", WorkRequestTag.describe(WorkRequestTag.SEND.id(3)));
    assertEquals("RDMA WRITE from chunk 2", WorkRequestTag.describe(WorkRequestTag.WRITE.id(2)));
    assertEquals("receive in slot 0", WorkRequestTag.describe(WorkRequestTag.RECV.id(0)));
    assertEquals("receive of RDMA_BIND in slot 0", WorkRequestTag.describe(WorkRequestTag.BIND.id(0)));
  }

  @Test
  void aNegativeSlotIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> WorkRequestTag.SEND.id(-1));
  }
}
