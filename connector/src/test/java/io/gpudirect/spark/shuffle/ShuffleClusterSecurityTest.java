package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.shuffle.BlockToFetch;
import io.gpudirect.shuffle.FetchLimits;
import io.gpudirect.shuffle.FetchedBlock;
import io.gpudirect.shuffle.ShuffleBlockFetcher;
import io.gpudirect.shuffle.ShuffleClients;
import io.gpudirect.shuffle.ShuffleFetchException;
import io.gpudirect.testing.TestCertificates;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A two-executor cluster with Spark's authentication and RPC encryption on, and the shuffle's TLS
 * ({@code spark.gpudirect.shuffle.tls} with test certificates made here): the shuffle's rows come
 * back through servers that speak only TLS, and an executor's server refuses a reducer with
 * another application's secret, and one without TLS, while it serves this application's.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShuffleClusterSecurityTest {
  @TempDir static Path tmp;
  static ShuffleCluster cluster;
  static JavaSparkContext jsc;
  static final List<Tuple2<Integer, Integer>> PAIRS =
      IntStream.range(0, 20_000).mapToObj(i -> new Tuple2<>(i % 1000, i)).toList();

  @BeforeAll
  static void startCluster() throws Exception {
    // The executors' servers are reached by this machine's name, as Spark's Workers know it.
    TestCertificates cert = TestCertificates.create(tmp.resolve("tls"), "shuffle",
        List.of(org.apache.spark.util.Utils.localHostName()));
    cluster = ShuffleCluster.start("gpudirect-shuffle-security", ShuffleCluster.twoWorkers(tmp)
        .conf("spark.authenticate", "true")
        .conf("spark.authenticate.secret", "this-cluster's-spark-secret-" + System.nanoTime())
        .conf("spark.network.crypto.enabled", "true"), Map.of(
        ShuffleTransport.TLS, "true",
        ShuffleTransport.TLS_CERTIFICATE, cert.certificate().toString(),
        ShuffleTransport.TLS_KEY, cert.privateKey().toString(),
        ShuffleTransport.TLS_TRUST_STORE, cert.certificate().toString()));
    jsc = JavaSparkContext.fromSparkContext(cluster.spark.sparkContext());
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static JavaPairRDD<Integer, Integer> shuffled() {
    JavaPairRDD<Integer, Integer> rdd = jsc.parallelizePairs(PAIRS, 4).partitionBy(new HashPartitioner(6));
    assertEquals(PAIRS.size(), rdd.count());
    return rdd;
  }

  @Test
  void theRowsComeBackOverTls() throws Exception {
    Map<Integer, Long> sums = new TreeMap<>(jsc.parallelizePairs(PAIRS, 4)
        .mapToPair(p -> new Tuple2<>(p._1(), (long) p._2())).reduceByKey(Long::sum, 5).collectAsMap());
    Map<Integer, Long> expected = new TreeMap<>();
    PAIRS.forEach(p -> expected.merge(p._1(), (long) p._2(), Long::sum));
    assertEquals(expected, sums);
    cluster.settled();
    assertEquals(0, cluster.fetchFailures.get(), "fetch failures");
    assertTrue(cluster.remoteBlocksFetched.get() > 0, "blocks fetched from the other executor");
    cluster.onEachExecutor(GpuDirectShuffleManager::serverDescription).forEach((executor, server) -> {
      assertNotNull(server, "executor " + executor + " ran map tasks, so it serves");
      assertTrue(server.contains("TLS"), "executor " + executor + "'s server: " + server);
    });
  }

  /**
   * From this JVM, the blocks of one executor's map output: refused with another application's
   * secret (REFUSED, naming the block), refused without TLS (the server takes nothing else), and
   * served with this application's secret over TLS.
   */
  @Test
  void anExecutorsServerServesOnlyThisApplicationOverTls() throws Exception {
    JavaPairRDD<Integer, Integer> rdd = shuffled();
    int shuffleId = ((ShuffleDependency<?, ?, ?>) rdd.rdd().dependencies().head()).shuffleId();
    SparkEnv env = SparkEnv.get();
    Map<InetSocketAddress, List<BlockToFetch>> byServer = new java.util.LinkedHashMap<>();
    for (MapOutputBlock b : MapOutputBlock.of(((MapOutputTrackerMaster) env.mapOutputTracker())
        .getMapSizesByExecutorId(shuffleId, 0, Integer.MAX_VALUE, 0, 6), false)) {
      byServer.computeIfAbsent(ServerLocation.of(b.location()), s -> new java.util.ArrayList<>())
          .add(new BlockToFetch(b.id(), b.size()));
    }
    Map.Entry<InetSocketAddress, List<BlockToFetch>> one = byServer.entrySet().iterator().next();
    Map<InetSocketAddress, List<BlockToFetch>> blocks = Map.of(one.getKey(), one.getValue().subList(0, 1));
    SparkConf conf = env.conf();
    ShuffleTransport transport = ShuffleTransport.of(conf);
    byte[] secret = ShuffleSecret.of(conf, env.securityManager());
    byte[] another = new byte[32];
    new SecureRandom().nextBytes(another);

    ShuffleFetchException refused = assertThrows(ShuffleFetchException.class,
        () -> fetchFirst(blocks, transport.client(another, ShuffleSecret.SETTING)));
    assertEquals(ShuffleFetchException.Reason.REFUSED, refused.reason(), refused.getMessage());
    assertTrue(refused.getMessage().contains(refused.block().name()), refused.getMessage());

    ClientConfig plaintext = transport.client(secret, ShuffleSecret.SETTING).toBuilder()
        .tls(false).tlsTrustStore(null).maxRetries(0).build();
    ShuffleFetchException plain = assertThrows(ShuffleFetchException.class, () -> fetchFirst(blocks, plaintext));
    assertTrue(plain.getMessage().contains("requires TLS"), plain.getMessage());

    // A map status's sizes are approximate (Spark logs-encodes them): the block came, with bytes.
    assertTrue(fetchFirst(blocks, transport.client(secret, ShuffleSecret.SETTING)) > 0);
  }

  /** The size of the first block of {@code blocks} fetched with {@code config}, or its fetch failure. */
  private static long fetchFirst(Map<InetSocketAddress, List<BlockToFetch>> blocks, ClientConfig config) {
    try (BufferAllocator memory = BufferAllocator.root().newChildAllocator("security test", 1L << 30);
        ShuffleClients clients = new ShuffleClients(config, ClientContext.shared());
        ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(blocks, new FetchLimits(1L << 20, 4, 4), clients,
            memory);
        FetchedBlock b = fetcher.next()) {
      return b.size();
    }
  }
}
