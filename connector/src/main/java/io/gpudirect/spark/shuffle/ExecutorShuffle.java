package io.gpudirect.spark.shuffle;

import io.gpudirect.DaemonThreads;
import io.gpudirect.GpuDirectException;
import io.gpudirect.client.ClientContext;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.shuffle.FetchLimits;
import io.gpudirect.shuffle.FetchToDisk;
import io.gpudirect.shuffle.ShuffleClients;
import io.gpudirect.shuffle.server.ExecutorShuffleServer;
import io.gpudirect.spark.rapids.RapidsEngine;
import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.storage.BlockManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one executor (or the driver, in local mode) runs for the shuffle, each made on first use
 * and closed when Spark stops the shuffle manager: its server, started at its first map task
 * (Spark 3.5 builds the shuffle manager before the block manager whose directories it serves,
 * and only executors that wrote map outputs need one), and its reducers' connections to the
 * other executors' servers, with the memory their blocks are fetched into.
 */
final class ExecutorShuffle implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorShuffle.class);
  /** Spark's limit on a remote block fetched into memory; those above it go to disk. */
  static final String MAX_IN_MEMORY = "spark.network.maxRemoteBlockSizeFetchToMem";
  /**
   * Threads of the executor that decode (decrypt and decompress) its reduce tasks' remote blocks
   * ahead of them ({@link DecodeAhead}); 0, the default, decodes each on its task's thread, as
   * Spark's own reader does.
   */
  static final String DECODE_THREADS = ShuffleTransport.PREFIX + "decodeThreads";
  /**
   * Threads of the executor that compress and write its map tasks' partitions
   * ({@link ThreadedBypassWriter}, for shuffles Spark writes with its bypass-merge-sort writer);
   * 0, the default without the RAPIDS Accelerator, leaves every map task to Spark's own writer.
   */
  static final String WRITE_THREADS = ShuffleTransport.PREFIX + "writeThreads";

  private final SparkConf conf;
  private final ShuffleTransport transport;
  private final int decodeThreads;
  private final int writeThreads;
  private ExecutorService decoders;
  private ExecutorService[] writers;
  private final LongAdder retainedRecords = new LongAdder();
  private ExecutorShuffleServer server;
  private ShuffleClients clients;
  private BufferAllocator memory;
  private boolean closed;

  ExecutorShuffle(SparkConf conf, ShuffleTransport transport) {
    this.conf = conf;
    this.transport = transport;
    this.decodeThreads = decodeThreads(conf);
    this.writeThreads = writeThreads(conf);
  }

  /** {@value #DECODE_THREADS}, checked: a bad value stops the application at start, naming the key. */
  static int decodeThreads(SparkConf conf) {
    return threads(conf, DECODE_THREADS, "decode on the task's thread");
  }

  /**
   * {@value #WRITE_THREADS}, checked as {@link #decodeThreads}. Unset, twice the executor's task
   * slots where the RAPIDS Accelerator's SQL is on, whose batches these threads then serialize as
   * its own writer's pool does (on the lab's H100 host, 12 threads for 6 slots took a 5.5 GB
   * join's map phase from 4.78 to 4.46 s, the plugin's own shuffle's 4.36 s); otherwise 0: for
   * Spark's rows they made no map phase faster.
   */
  static int writeThreads(SparkConf conf) {
    if (!conf.contains(WRITE_THREADS) && rapidsSqlOn(conf)) {
      int cores = conf.getInt("spark.executor.cores", Runtime.getRuntime().availableProcessors());
      return Math.min(256, 2 * Math.max(1, cores / Math.max(1, conf.getInt("spark.task.cpus", 1))));
    }
    return threads(conf, WRITE_THREADS, "Spark's own writer");
  }

  private static boolean rapidsSqlOn(SparkConf conf) {
    return RapidsEngine.pluginOn(conf) && conf.getBoolean("spark.rapids.sql.enabled", true);
  }

  private static int threads(SparkConf conf, String key, String zero) {
    String value = conf.get(key, "0").trim();
    int n;
    try {
      n = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 0 || n > 256) {
      throw new GpuDirectException(key + " must be a whole number from 0 (" + zero + ") to 256, not '" + value + "'");
    }
    return n;
  }

  /**
   * Why {@code writeThreads} writer threads are too few for this executor's task slots, or
   * empty: where fewer threads compress than tasks feed them, the map phase waits on them, where
   * Spark's own writer compresses on every task's thread (on the lab's H100 host, 4 threads for 6
   * slots made the map phase 1.35× slower). Only where the slots are known from the
   * configuration ({@code spark.executor.cores} over {@code spark.task.cpus}).
   */
  static Optional<String> tooFewWriters(SparkConf conf, int writeThreads) {
    if (writeThreads == 0 || !conf.contains("spark.executor.cores")) {
      return Optional.empty();
    }
    int slots = ShuffleTransport.taskSlots(conf);
    return writeThreads >= slots ? Optional.empty() : Optional.of(WRITE_THREADS + " is "
        + writeThreads + ", fewer than this executor's " + slots + " task slots: its map tasks wait on the"
        + " writer threads, slower than Spark's own writer; set it to at least " + slots + ", or to 0");
  }

  /** How many threads write map tasks' partitions; 0: Spark's own writer writes them. */
  int writeThreads() {
    return writeThreads;
  }

  /**
   * The threads that write map tasks' partitions, one queue each, so that a partition's chunks,
   * always sent to the same one, are written in order; only where {@link #writeThreads()} > 0.
   */
  synchronized ExecutorService[] writers() {
    checkOpen();
    if (writers == null) {
      LOG.info("This executor writes map tasks' partitions on {} threads of its own ({}{})", writeThreads, WRITE_THREADS,
          conf.contains(WRITE_THREADS) ? "" : " unset: twice the task slots, the RAPIDS Accelerator's SQL being on");
      tooFewWriters(conf, writeThreads).ifPresent(LOG::warn);
      writers = new ExecutorService[writeThreads];
      for (int i = 0; i < writeThreads; i++) {
        writers[i] = Executors.newSingleThreadExecutor(
            DaemonThreads.named("gpudirect-shuffle-write-" + (i + 1)));
      }
    }
    return writers;
  }

  /** Records the writer threads serialized from a reference of their own ({@link RetainedBatch}), so far. */
  LongAdder retainedRecords() {
    return retainedRecords;
  }

  /** How many of {@link #decoders()} one reduce task may use at once; 0: none, its own thread decodes. */
  int decodeThreads() {
    return decodeThreads;
  }

  /** The threads that decode remote blocks ahead of their tasks; only where {@link #decodeThreads()} > 0. */
  synchronized ExecutorService decoders() {
    checkOpen();
    if (decoders == null) {
      decoders = Executors.newFixedThreadPool(decodeThreads,
          DaemonThreads.numbered("gpudirect-shuffle-decode"));
    }
    return decoders;
  }

  /** The port of this executor's server, started now if it is not yet. */
  synchronized int serverPort() {
    checkOpen();
    if (server == null) {
      SparkEnv env = SparkEnv.get();
      BlockManager blocks = env.blockManager();
      List<Path> dirs = Stream.of(blocks.diskBlockManager().localDirs()).map(File::toPath).toList();
      String host = blocks.blockManagerId().host();
      server = ExecutorShuffleServer.start(dirs, conf.getInt("spark.diskStore.subDirectories", 64), host,
          ShuffleSecret.of(conf, env.securityManager()), transport.serving(), WriterChecksums.algorithm(conf));
      LOG.info("Executor {} serves its shuffle files over gpudirect on {}", blocks.blockManagerId().executorId(),
          server.address());
    }
    return server.port();
  }

  /** The connections to the other executors' servers, shared by every reduce task here. */
  synchronized ShuffleClients clients() {
    checkOpen();
    if (clients == null) {
      SparkEnv env = SparkEnv.get();
      clients = new ShuffleClients(transport.client(ShuffleSecret.of(conf, env.securityManager()),
          ShuffleSecret.SETTING), ClientContext.shared());
    }
    return clients;
  }

  /** This executor's server, as logged when it started; null before its first map task. */
  synchronized String serverDescription() {
    return server == null ? null : server.address();
  }

  /** Bytes this executor's reducers fetched so far, by the transport they came over. */
  synchronized Map<String, Long> bytesFetchedByTransport() {
    return clients == null ? Map.of() : clients.bytesFetchedByTransport();
  }

  /** Where fetched blocks are charged until their task has read them. */
  synchronized BufferAllocator memory() {
    checkOpen();
    if (memory == null) {
      memory = BufferAllocator.root().newChildAllocator("shuffle fetches", Long.MAX_VALUE);
    }
    return memory;
  }

  /** Spark's own limits on what a reduce task has in flight. */
  FetchLimits limits() {
    return new FetchLimits(conf.getSizeAsBytes("spark.reducer.maxSizeInFlight", "48m"),
        conf.getInt("spark.reducer.maxReqsInFlight", Integer.MAX_VALUE),
        conf.getInt("spark.reducer.maxBlocksInFlightPerAddress", Integer.MAX_VALUE));
  }

  /**
   * Spark's own rule for which remote blocks go to disk rather than into memory: those over
   * {@code spark.network.maxRemoteBlockSizeFetchToMem}, into the block manager's temporary local
   * files (where Spark's fetcher puts them too).
   */
  FetchToDisk toDisk() {
    return new FetchToDisk(conf.getSizeAsBytes(MAX_IN_MEMORY, "200m"),
        () -> SparkEnv.get().blockManager().diskBlockManager().createTempLocalBlock()._2().toPath());
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("The gpudirect shuffle of this executor is stopped");
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (decoders != null) {
      // Blocks a decoder still holds are given back by their fetchers, which their tasks close.
      decoders.shutdownNow();
    }
    if (writers != null) {
      // A map task still writing fails; its writer's stop(false) removes what it wrote.
      java.util.Arrays.stream(writers).forEach(ExecutorService::shutdownNow);
    }
    // Closed in reverse order: the memory last, once no fetch can still be charged to it.
    try (BufferAllocator m = memory; ShuffleClients c = clients; ExecutorShuffleServer s = server) {
      LOG.debug("Stopping the gpudirect shuffle of this executor");
    }
  }
}
