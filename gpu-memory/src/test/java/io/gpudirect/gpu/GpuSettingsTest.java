package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A JVM's GPU read sizes, or an error naming the setting and both ways to set it. */
class GpuSettingsTest {
  @Test
  void theDefaultsKeepFourStreamsBusyAndLeaveTheGpuToRmm() {
    assertEquals(new GpuSettings(16, Long.MAX_VALUE, 0.125), GpuSettings.DEFAULTS);
  }

  /** One chunk cannot overlap a read with a copy; 16385 chunks are more than 64 GiB pinned. */
  @ParameterizedTest
  @ValueSource(ints = {-4, 0, 1, 16385})
  void aPoolOutOfRangeIsRefusedSayingBothWaysToSetIt(int chunks) {
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> new GpuSettings(chunks, 1, 0.5));
    assertTrue(e.getMessage().startsWith("gpudirect setting pinnedChunks=" + chunks
        + " is not a number of 4 MiB pinned chunks between 2 and 16384"), e.getMessage());
    assertTrue(e.getMessage().contains("spark.gpudirect.pinnedChunks") && e.getMessage().contains("-Dgpudirect.pinnedChunks"),
        e.getMessage());
  }

  @Test
  void limitsAndFractionsOutOfRangeAreRefused() {
    assertThrows(GpuDirectException.class, () -> new GpuSettings(16, 0, 0.5));
    assertThrows(GpuDirectException.class, () -> new GpuSettings(16, 1, 0));
    assertThrows(GpuDirectException.class, () -> new GpuSettings(16, 1, 1.5));
    assertEquals(1.0, new GpuSettings(2, 1, 1).prefetchFraction());
  }
}
