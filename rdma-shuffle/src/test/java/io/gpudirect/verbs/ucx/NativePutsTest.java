package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.verbs.ucx.UcxVerbs.Reach;
import org.junit.jupiter.api.Test;

/**
 * When a side's WRITEs may be UCX puts: only where a NIC may carry them, since UCX's software
 * puts can abort the receiving JVM (UcxVerbs' class comment). Needs no UCX: it is the rule alone.
 */
class NativePutsTest {
  @Test
  void withoutAnRdmaDeviceNeverPutsWhateverUcxTlsSays() {
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "", null));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "", "rc,tcp"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "", "all"));
  }

  @Test
  void verbsOnlyAlwaysPuts() {
    assertTrue(UcxVerbs.nativePuts(Reach.RDMA_ONLY, "mlx5_0", null));
  }

  @Test
  void withADevicePutsUnlessUcxTlsLeavesVerbsOut() {
    assertTrue(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", null));
    assertTrue(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "rc_x,tcp"));
    assertTrue(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "TCP,DC"));
    assertTrue(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "all"));
    assertTrue(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "^sm"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "tcp"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "sm,tcp"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "^ib"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "^sm,rc"));
    assertFalse(UcxVerbs.nativePuts(Reach.ANY, "mlx5_0", "^all"));
  }
}
