package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A JVM's GPU read sizes from {@code -Dgpudirect.X}, or an error naming the setting. */
class GpuSettingsTest {
  @AfterEach
  void clear() {
    System.clearProperty("gpudirect.pinnedChunks");
    System.clearProperty("gpudirect.deviceMemoryLimit");
    System.clearProperty("gpudirect.prefetchFraction");
  }

  @Test
  void unsetAreTheDefaults() {
    assertEquals(new GpuSettings(16, Long.MAX_VALUE, 0.125), GpuSettings.fromSystemProperties());
  }

  @Test
  void eachPropertyIsTaken() {
    System.setProperty("gpudirect.pinnedChunks", " 128");
    System.setProperty("gpudirect.deviceMemoryLimit", "8589934592");
    System.setProperty("gpudirect.prefetchFraction", "0.25");
    assertEquals(new GpuSettings(128, 8L << 30, 0.25), GpuSettings.fromSystemProperties());
  }

  @ParameterizedTest
  @ValueSource(strings = {"lots", "128m", "1.5"})
  void notANumberIsRefusedNamingTheProperty(String setting) {
    System.setProperty("gpudirect.pinnedChunks", setting);
    GpuDirectException e = assertThrows(GpuDirectException.class, GpuSettings::fromSystemProperties);
    assertEquals("-Dgpudirect.pinnedChunks=" + setting + " is not a number", e.getMessage());
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
