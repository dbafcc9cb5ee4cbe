package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code -Dgpudirect.pinnedChunks}: the executor's pinned pool, or an error naming the setting. */
class PinnedChunksSettingTest {
  @Test
  void unsetIsSixteenAndANumberIsTaken() {
    assertEquals(16, GpuResources.pinnedChunks(null));
    assertEquals(128, GpuResources.pinnedChunks(" 128"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "-4", "lots", "128m", "16385"})
  void anythingElseIsRefusedNamingTheSetting(String setting) {
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> GpuResources.pinnedChunks(setting));
    assertTrue(e.getMessage().startsWith("-Dgpudirect.pinnedChunks=" + setting + " is not"), e.getMessage());
  }
}
