package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.ClientConfig;
import java.time.Duration;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The shuffle's transport settings: the read path's options under spark.gpudirect.shuffle., Spark's timeouts. */
class ShuffleTransportTest {
  @ParameterizedTest
  @ValueSource(strings = {"tcp", "auto", "rdma"})
  void theServersAndReducersTakeTheTransport(String transport) {
    ShuffleTransport t = ShuffleTransport.of(new SparkConf(false)
        .set("spark.gpudirect.shuffle.transport", transport).set("spark.gpudirect.shuffle.rdma.provider", "ucx"));
    assertEquals(transport, t.serving().transport());
    assertEquals("ucx", t.serving().rdmaProvider());
    assertNull(t.serving().tls());
    ClientConfig client = t.client(new byte[] {1}, ShuffleSecret.SETTING);
    assertEquals(transport, client.transport());
  }

  @Test
  void aBadValueIsRefusedAtStartNamingItsKey() {
    SparkConf conf = new SparkConf(false).set("spark.gpudirect.shuffle.rdma.provider", "ucxx");
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(conf, true));
    assertTrue(e.getMessage().contains("spark.gpudirect.shuffle.rdma.provider"), e.getMessage());
    SparkConf transport = new SparkConf(false).set("spark.gpudirect.shuffle.transport", "infiniband");
    e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(transport, true));
    assertTrue(e.getMessage().contains("infiniband"), e.getMessage());
  }

  @Test
  void timeoutsAreSparksUnlessSet() {
    ClientConfig unset = ShuffleTransport.of(new SparkConf(false)).client(null, ShuffleSecret.SETTING);
    assertEquals(Duration.ofSeconds(120), unset.requestTimeout());
    assertEquals(Duration.ofSeconds(120), unset.connectTimeout());
    ClientConfig spark = ShuffleTransport.of(new SparkConf(false).set("spark.network.timeout", "7")
        .set("spark.shuffle.io.connectionTimeout", "3s")).client(null, ShuffleSecret.SETTING);
    assertEquals(Duration.ofSeconds(7), spark.requestTimeout(), "Spark reads a bare number as seconds");
    assertEquals(Duration.ofSeconds(3), spark.connectTimeout());
    ClientConfig own = ShuffleTransport.of(new SparkConf(false).set("spark.network.timeout", "7")
        .set("spark.gpudirect.shuffle.requestTimeout", "2s")).client(null, ShuffleSecret.SETTING);
    assertEquals(Duration.ofSeconds(2), own.requestTimeout());
    assertEquals(Duration.ofSeconds(7), own.connectTimeout());
  }

  @Test
  void tlsNeedsTheServersMaterialAndRpcEncryptionNeedsTls() {
    SparkConf noMaterial = new SparkConf(false).set("spark.gpudirect.shuffle.tls", "true");
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(noMaterial, true));
    assertTrue(e.getMessage().contains(ShuffleTransport.TLS_CERTIFICATE) && e.getMessage().contains(ShuffleTransport.TLS_KEY),
        e.getMessage());
    SparkConf missing = new SparkConf(false).set("spark.gpudirect.shuffle.tls", "true")
        .set(ShuffleTransport.TLS_CERTIFICATE, "/nonexistent/cert.pem").set(ShuffleTransport.TLS_KEY, "/nonexistent/key.pem");
    e = assertThrows(GpuDirectException.class, () -> ShuffleTransport.of(missing).serving());
    assertTrue(e.getMessage().contains(ShuffleTransport.TLS_CERTIFICATE + "=/nonexistent/cert.pem"), e.getMessage());
    SparkConf encrypted = new SparkConf(false).set("spark.network.crypto.enabled", "true");
    e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(encrypted, true));
    assertTrue(e.getMessage().contains("spark.gpudirect.shuffle.tls=true"), e.getMessage());
  }
}
