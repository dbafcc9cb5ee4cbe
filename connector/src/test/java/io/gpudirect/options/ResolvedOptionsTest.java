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
    assertEquals(8, o.client().streams());
    assertEquals(1 << 20, o.client().chunkSize());
    assertEquals(64L << 20, o.client().maxBytesInFlight());
    assertEquals(Duration.ofSeconds(30), o.client().requestTimeout());
  }

  @Test
  void badValueNamesTheOptionAndItsSessionKey() {
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> ResolvedOptions.resolve(Map.of("streams", "many"), k -> null));
    assertTrue(e.getMessage().contains("streams") && e.getMessage().contains("spark.gpudirect.streams"), e.getMessage());
  }
}
