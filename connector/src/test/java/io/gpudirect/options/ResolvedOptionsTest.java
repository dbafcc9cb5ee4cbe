package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

  /** A number out of its range is refused as a word is, naming the option and its session key. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "streams | -1 | a whole number from 1 to 256", "streams | 0 | a whole number from 1 to 256",
      "streams | 257 | a whole number from 1 to 256", "maxRetries | -1 | a whole number from 0 to 100",
      "listing.maxEntries | 0 | a whole number from 1 to 2147483647", "chunkSize | 0 | a size of at least 1",
      "maxBytesInFlight | 1m | a size of at least chunkSize (4m)", "listing.maxBytes | 0 | a size of at least 1",
      "maxPartitionBytes | 0 | a size of at least 1", "connectTimeout | 0s | a duration above 0",
      "requestTimeout | 0 | a duration above 0", "listing.timeout | 0ms | a duration above 0"})
  void aNumberOutOfItsRangeNamesTheOptionAndItsSessionKey(String key, String value, String expected) {
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> ResolvedOptions.resolve(Map.of(key, value), k -> null));
    assertEquals("Invalid value '" + value + "' for option " + key + " (session key spark.gpudirect." + key
        + "): expected " + expected, e.getMessage());
  }

  @Test
  void aMisspeltRdmaProviderNamesTheOptionAndItsSessionKey() {
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> ResolvedOptions.resolve(Map.of("rdma.provider", "ucxx"), k -> null));
    assertEquals("Invalid value 'ucxx' for option rdma.provider (session key spark.gpudirect.rdma.provider):"
        + " expected auto, ucx or disni", e.getMessage());
  }

  /** The options keep the provider by name; each name the client knows must pass, in any case. */
  @Test
  void everyRdmaProviderIsTakenByNameAndReachesTheClient() {
    for (RdmaProvider p : RdmaProvider.values()) {
      for (String name : new String[] {p.name(), p.name().toLowerCase(Locale.ROOT)}) {
        ResolvedOptions o = ResolvedOptions.resolve(Map.of("rdma.provider", name), k -> null);
        assertEquals(p, o.client().config(o.secret(), "auth.secret").rdmaProvider(), name);
      }
    }
    ResolvedOptions blank = ResolvedOptions.resolve(Map.of("rdma.provider", " "), k -> null);
    assertEquals(RdmaProvider.AUTO, blank.client().config(blank.secret(), "auth.secret").rdmaProvider());
  }

  /**
   * The scan's readers and the gpudirect:// file system resolve the same settings from
   * different places; equal values must key one connection pool, however they are written.
   */
  @Test
  void clientSettingsCompareByValueAndHoldNoSecret() {
    ClientSettings fromRead = ResolvedOptions.resolve(
        Map.of("chunkSize", "4096k", "requestTimeout", "30000ms", "auth.secret", "s3cr3t-value-long-enough"),
        k -> null).client();
    ClientSettings fromSession = ResolvedOptions.resolve(Map.of(),
        Map.of("spark.gpudirect.chunkSize", "4m", "spark.gpudirect.requestTimeout", "30s")::get).client();
    assertEquals(fromRead, fromSession);
    assertFalse(fromRead.toString().contains("s3cr3t"), fromRead.toString());
  }

  @Test
  void theSecretNeverShowsAsText() {
    Secret secret = ResolvedOptions.resolve(Map.of("auth.secret", "s3cr3t-value-long-enough"), k -> null).secret();
    assertEquals("Secret(redacted)", secret.toString());
    assertTrue(ResolvedOptions.resolve(Map.of(), k -> null).secret().isEmpty());
  }

  @Test
  void aTrustStoreWithoutTlsFailsWhenResolved() {
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> ResolvedOptions.resolve(Map.of("tls.trustStore", "/etc/ca.pem"), k -> null));
    assertTrue(e.getMessage().contains("tls.trustStore is set"), e.getMessage());
  }
}
