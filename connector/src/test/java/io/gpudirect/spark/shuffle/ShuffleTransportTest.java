package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.shuffle.server.ExecutorShuffleServer;
import io.gpudirect.testing.TestCertificates;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
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
    for (String key : new String[] {"spark.gpudirect.shuffle.decodeThreads", "spark.gpudirect.shuffle.writeThreads"}) {
      for (String threads : new String[] {"-1", "257", "four"}) {
        SparkConf bad = new SparkConf(false).set(key, threads);
        e = assertThrows(GpuDirectException.class, () -> new GpuDirectShuffleManager(bad, true));
        assertTrue(e.getMessage().contains(key) && e.getMessage().contains(threads), e.getMessage());
      }
    }
  }

  @Test
  void writerThreadsAreTwiceTheTaskSlotsWithTheRapidsAcceleratorsSqlOnUnlessSet() {
    SparkConf rapids = new SparkConf(false).set("spark.plugins", "com.nvidia.spark.SQLPlugin")
        .set("spark.executor.cores", "6");
    assertEquals(12, ExecutorShuffle.writeThreads(rapids));
    assertEquals(6, ExecutorShuffle.writeThreads(rapids.clone().set("spark.task.cpus", "2")));
    assertEquals(0, ExecutorShuffle.writeThreads(rapids.clone().set(ExecutorShuffle.WRITE_THREADS, "0")), "set: as set");
    assertEquals(0, ExecutorShuffle.writeThreads(rapids.clone().set("spark.rapids.sql.enabled", "false")), "its SQL off");
    assertEquals(0, ExecutorShuffle.writeThreads(new SparkConf(false).set("spark.executor.cores", "6")), "no plugin");
    assertEquals(Math.min(256, 2 * Runtime.getRuntime().availableProcessors()),
        ExecutorShuffle.writeThreads(new SparkConf(false).set("spark.plugins", "com.nvidia.spark.SQLPlugin")),
        "cores unset: the executor has the machine's");
  }

  @Test
  void fewerWriterThreadsThanTaskSlotsAreNamedInAWarning() {
    SparkConf six = new SparkConf(false).set("spark.executor.cores", "6");
    String warning = ExecutorShuffle.tooFewWriters(six, 4).orElseThrow();
    assertTrue(warning.contains("spark.gpudirect.shuffle.writeThreads is 4") && warning.contains("6 task slots"), warning);
    assertFalse(ExecutorShuffle.tooFewWriters(six, 6).isPresent());
    assertFalse(ExecutorShuffle.tooFewWriters(six, 0).isPresent(), "0 is Spark's own writer");
    assertFalse(ExecutorShuffle.tooFewWriters(six.clone().set("spark.task.cpus", "2"), 3).isPresent(), "3 slots of 2 cores");
    assertFalse(ExecutorShuffle.tooFewWriters(new SparkConf(false), 1).isPresent(), "slots unknown: no guess");
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
  void streamsPerServerAreSparksConnectionsPerPeerUnlessSet() {
    assertEquals(1, ShuffleTransport.of(new SparkConf(false)).client(null, ShuffleSecret.SETTING).streams(),
        "one stream per server where the executor's cores are not known, as Spark's one connection per peer");
    assertEquals(1, streams(new SparkConf(false).set("spark.executor.cores", "1")), "one-core executors keep one");
    assertEquals(2, streams(new SparkConf(false).set("spark.executor.cores", "2")));
    assertEquals(4, streams(new SparkConf(false).set("spark.executor.cores", "6")), "a stream per concurrent task, at most 4");
    assertEquals(2, streams(new SparkConf(false).set("spark.executor.cores", "6").set("spark.task.cpus", "3")),
        "tasks of 3 cores: two at once");
    assertEquals(1, streams(new SparkConf(false).set("spark.executor.cores", "6")
        .set("spark.shuffle.io.numConnectionsPerPeer", "1")), "Spark's connections per peer, where set, win");
    assertEquals(3, ShuffleTransport.of(new SparkConf(false).set("spark.shuffle.io.numConnectionsPerPeer", "3"))
        .client(null, ShuffleSecret.SETTING).streams());
    assertEquals(4, ShuffleTransport.of(new SparkConf(false).set("spark.shuffle.io.numConnectionsPerPeer", "3")
        .set("spark.gpudirect.shuffle.streams", "4")).client(null, ShuffleSecret.SETTING).streams());
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

  /**
   * A reducer and an executor's server of which only one speaks TLS: each side's error names the
   * shuffle's settings, not the read path's option or the CLI's flags it named before.
   */
  @Test
  void tlsOnOneSideOnlyNamesTheShufflesSettings(@TempDir Path tmp) throws Exception {
    TestCertificates cert = TestCertificates.create(tmp.resolve("tls"), "shuffle");
    ShuffleTransport tls = ShuffleTransport.of(new SparkConf(false).set(ShuffleTransport.TLS, "true")
        .set(ShuffleTransport.TLS_CERTIFICATE, cert.certificate().toString())
        .set(ShuffleTransport.TLS_KEY, cert.privateKey().toString())
        .set(ShuffleTransport.TLS_TRUST_STORE, cert.certificate().toString()));
    ShuffleTransport plain = ShuffleTransport.of(new SparkConf(false));
    List<Path> dirs = List.of(Files.createDirectories(tmp.resolve("blockmgr-a")));

    String toTls = connectError(dirs, tls, plain);
    assertTrue(toTls.contains("requires TLS") && toTls.contains(ShuffleTransport.TLS + "=true")
        && toTls.contains(ShuffleTransport.TLS_TRUST_STORE), toTls);
    assertFalse(toTls.contains("--tls") || toTls.contains("option tls"), toTls);

    String toPlain = connectError(dirs, plain, tls);
    assertTrue(toPlain.contains("answered in plaintext") && toPlain.contains(ShuffleTransport.TLS + "=true")
        && toPlain.contains(ShuffleTransport.TLS_CERTIFICATE), toPlain);
    assertFalse(toPlain.contains("--tls"), toPlain);
  }

  /** What a reducer configured by {@code client} is told connecting to a server configured by {@code server}. */
  private static String connectError(List<Path> dirs, ShuffleTransport server, ShuffleTransport client) {
    byte[] secret = new byte[32];
    try (ExecutorShuffleServer s = ExecutorShuffleServer.start(dirs, 64, "127.0.0.1", secret, server.serving())) {
      ClientConfig config = client.client(secret, ShuffleSecret.SETTING).toBuilder().maxRetries(0).build();
      return assertThrows(GpuDirectException.class,
          () -> BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()), config, ClientContext.shared())
              .close()).getMessage();
    }
  }

  private static int streams(SparkConf conf) {
    return ShuffleTransport.of(conf).client(null, ShuffleSecret.SETTING).streams();
  }
}
