package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResolvedOptionsTest {
  @Test
  void readOptionBeatsSessionBeatsDefault() {
    Map<String, String> session = Map.of("spark.gpudirect.streams", "6", "spark.gpudirect.chunkSize", "1m");
    ResolvedOptions o = ResolvedOptions.resolve(Map.of("STREAMS", "8"), session::get);
    assertEquals(8, o.getInt(GpuDirectOption.STREAMS));
    assertEquals(1 << 20, o.getBytes(GpuDirectOption.CHUNK_SIZE));
    assertEquals(64L << 20, o.getBytes(GpuDirectOption.MAX_BYTES_IN_FLIGHT));
    assertEquals(Duration.ofSeconds(30), o.getDuration(GpuDirectOption.REQUEST_TIMEOUT));
  }

  @Test
  void badValueNamesTheOptionAndItsSessionKey() {
    ResolvedOptions o = ResolvedOptions.resolve(Map.of("streams", "many"), k -> null);
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> o.getInt(GpuDirectOption.STREAMS));
    assertTrue(e.getMessage().contains("streams") && e.getMessage().contains("spark.gpudirect.streams"), e.getMessage());
  }
}
