package io.gpudirect.bench;

import io.gpudirect.cli.BenchmarksCommand;
import io.gpudirect.cli.ClientOptions;
import io.gpudirect.cli.OptionValues;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.server.BlockServer;
import io.gpudirect.spark.shuffle.StandaloneCluster;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code gpudirect bench}: our transport against its references on loopback, each pair run
 * interleaved (ours, reference, ours, reference) in the same process so that a busy machine
 * slows both alike, reported as ratios against the targets of issue 5.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {"Measure gpudirect against iperf3 (or a raw socket), Arrow Flight and Spark's own reader, on loopback;",
        "or, given gpudirect://HOST:PORT/PATH, the link to a running server: one file fetched at 1 and 4 streams",
        "(or --streams) beside iperf3 -R to the same host when an iperf3 server answers there.",
        "Prints one table (or --json); every run is bounded by --duration."})
public final class BenchCommand implements Callable<Integer>, BenchmarksCommand {
  /** The parts of the bench, in the order they run. */
  enum Section { fetch, latency, flight, spark, joins, memory, shuffle }

  @Option(names = "--duration", defaultValue = "3", description = "Seconds per timed run (default ${DEFAULT-VALUE}).")
  double duration;

  @Option(names = "--rounds", defaultValue = "2", description = "Times each pair runs, interleaved (default ${DEFAULT-VALUE}).")
  int rounds;

  @Option(names = "--size", defaultValue = "512m", description = "Size of the file fetched (default ${DEFAULT-VALUE}).")
  String size;

  @Option(names = "--arrow-size", defaultValue = "128m", description = "Size of the Arrow IPC file for Flight (default ${DEFAULT-VALUE}).")
  String arrowSize;

  @Option(names = "--spark-rows", defaultValue = "8000000", description = "Rows of the Parquet dataset for Spark (default ${DEFAULT-VALUE}).")
  long sparkRows;

  @Option(names = "--join-rows", defaultValue = "2000000", description = "Rows of the fact table of the join query (default ${DEFAULT-VALUE}).")
  long joinRows;

  @Option(names = "--join-pairs", defaultValue = "5", description = "Timed pairs of the join query, interleaved (default ${DEFAULT-VALUE}).")
  int joinPairs;

  @Option(names = "--memory-size", defaultValue = "4g", description = "File read by the -Xmx512m child JVM (default ${DEFAULT-VALUE}; sparse, no disk).")
  String memorySize;

  @Option(names = "--shuffle-size", defaultValue = "4g",
      description = "About how much the shuffle section's job shuffles (default ${DEFAULT-VALUE}).")
  String shuffleSize;

  @Option(names = "--shuffle-rounds", defaultValue = "5",
      description = "Rounds of the shuffle section, Spark's shuffle and ours alternated (default ${DEFAULT-VALUE}).")
  int shuffleRounds;

  @Option(names = "--shuffle-executor-cores", defaultValue = "1",
      description = "Cores of each of the shuffle section's executors, one per Worker (default ${DEFAULT-VALUE}).")
  int shuffleExecutorCores;

  @Option(names = "--shuffle-executor-memory", defaultValue = "1536m",
      description = "Heap of each of the shuffle section's executors, direct memory half as much (default"
          + " ${DEFAULT-VALUE}).")
  String shuffleExecutorMemory;

  @Option(names = "--shuffle-host", defaultValue = "127.0.0.1",
      description = "Address of the shuffle section's Master and driver, and of its Workers unless --shuffle-worker"
          + " places them (default ${DEFAULT-VALUE}).")
  String shuffleHost;

  @Option(names = "--shuffle-worker", paramLabel = "'ADDRESS [PREFIX...]'",
      description = "A Worker of the shuffle section's cluster, bound to ADDRESS, its JVM started behind the command"
          + " PREFIX if given (e.g. '10.201.0.2 ip netns exec NS'); once per Worker (default: two on --shuffle-host).")
  List<String> shuffleWorkers;

  @Option(names = "--shuffle-job", defaultValue = "join",
      description = "The shuffle section's job: join (two tables on a key, broadcasts off) or repartition (one table"
          + " hash-repartitioned and checksummed: the least work around the shuffle) (default ${DEFAULT-VALUE}).")
  SparkShuffle.Job shuffleJob;

  @Option(names = "--shuffle-conf", paramLabel = "KEY=VALUE",
      description = "A Spark setting for every application of the shuffle section, whichever its shuffle manager (e.g."
          + " spark.plugins=com.nvidia.spark.SQLPlugin for the RAPIDS Accelerator); once per setting.")
  Map<String, String> shuffleConf;

  @Option(names = "--shuffle-rapids-manager", paramLabel = "CLASS",
      description = "Also run the shuffle section's job with the RAPIDS Accelerator's shuffle manager CLASS (named for"
          + " the Spark version, e.g. com.nvidia.spark.rapids.spark353.RapidsShuffleManager) in MULTITHREADED mode;"
          + " needs the plugin, through --shuffle-conf.")
  String shuffleRapidsManager;

  @Option(names = "--shuffle-variant", paramLabel = "KEY=VALUE",
      description = "Also run the shuffle section's job with gpudirect's shuffle and this setting of its own (under"
          + " spark.gpudirect.shuffle., e.g. spark.gpudirect.shuffle.decodeThreads=4), a side of its own timed against"
          + " gpudirect's without it; once per setting, all on the one side.")
  Map<String, String> shuffleVariant;

  @Option(names = "--shuffle-disk-bound",
      description = "Also run the shuffle section's job with Spark's shuffle reading the other executor's blocks"
          + " from its disk (spark.shuffle.readHostLocalDisk, Spark's default on one host): no network at all, the"
          + " least job time any transport could give on this host, reported against Spark's Netty shuffle.")
  boolean shuffleDiskBound;

  @Option(names = "--shuffle-timeline", paramLabel = "FILE",
      description = "Append a line per timed shuffle job to FILE: the shuffle, the round, its start and end (Unix"
          + " seconds) and the bytes its map tasks wrote (dev/shaped-link --shuffle reads it).")
  Path shuffleTimeline;

  @Option(names = "--sections", split = ",",
      description = "Parts to run (default all but shuffle, which starts a cluster and two applications a round):"
          + " ${COMPLETION-CANDIDATES}.")
  Set<Section> sections;

  @Option(names = "--raw", description = "Use the raw socket baseline as the reference even when iperf3 is installed.")
  boolean forceRaw;

  @Option(names = "--json", description = "Print JSON instead of the table.")
  boolean json;

  @Option(names = "--no-progress", description = "No progress bar on stderr (drawn only on a terminal).")
  boolean noProgress;

  @Option(names = "--dir", description = "Where to write the test files (default: a temporary directory, removed after).")
  Path dir;

  @Parameters(arity = "0..1", paramLabel = "URI",
      description = "gpudirect://HOST:PORT/PATH of one file on a running server: bench that link instead of loopback.")
  String remote;

  @Option(names = "--iperf3-port", defaultValue = "5201",
      description = "Port of the iperf3 server on the remote host (default ${DEFAULT-VALUE}).")
  int iperf3Port;

  /** Secret, TLS, transport and streams for a remote URI, as ls and cat take them. */
  @Mixin
  ClientOptions client = new ClientOptions();

  @Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new BenchCommand()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (!(duration > 0 && duration <= 600)) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--duration must be a number of seconds above 0 and at most 600, not " + duration);
    }
    OptionValues.count("--rounds", rounds, 1, 20);
    OptionValues.count("--iperf3-port", iperf3Port, 1, 65535);
    if (remote != null) {
      return remote();
    }
    OptionValues.count("--join-pairs", joinPairs, 1, 50);
    OptionValues.count("--spark-rows", sparkRows, 1, 1_000_000_000);
    OptionValues.count("--join-rows", joinRows, 1, 1_000_000_000);
    long fileBytes = OptionValues.size("--size", size, 1 << 20, 1L << 40);
    long arrowBytes = OptionValues.size("--arrow-size", arrowSize, 1 << 20, 64L << 30);
    long memoryBytes = OptionValues.size("--memory-size", memorySize, 1 << 20, 1L << 40);
    long shuffleBytes = OptionValues.size("--shuffle-size", shuffleSize, 1 << 20, 1L << 40);
    OptionValues.count("--shuffle-rounds", shuffleRounds, 1, 50);
    OptionValues.count("--shuffle-executor-cores", shuffleExecutorCores, 1, 1024);
    long shuffleExecutorBytes = OptionValues.size("--shuffle-executor-memory", shuffleExecutorMemory, 256L << 20, 1L << 40);
    List<List<String>> shuffleWorkerPlaces = shuffleWorkerPlaces();
    if (shuffleRapidsManager != null && (shuffleConf == null
        || !shuffleConf.getOrDefault("spark.plugins", "").contains("com.nvidia.spark.SQLPlugin"))) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--shuffle-rapids-manager needs the RAPIDS"
          + " Accelerator on in every application: add --shuffle-conf spark.plugins=com.nvidia.spark.SQLPlugin");
    }
    if (shuffleVariant != null && !shuffleVariant.keySet().stream().allMatch(k -> k.startsWith("spark.gpudirect.shuffle."))) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--shuffle-variant takes gpudirect's shuffle settings"
          + " (spark.gpudirect.shuffle.*), not " + shuffleVariant.keySet() + ": a setting for every side goes in"
          + " --shuffle-conf");
    }
    Set<Section> run = sections == null || sections.isEmpty() ? EnumSet.complementOf(EnumSet.of(Section.shuffle))
        : EnumSet.copyOf(sections);
    boolean iperf = !forceRaw && Iperf3.available();
    java.io.PrintWriter out = spec.commandLine().getOut();
    BenchReport report = new BenchReport();
    report.context("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    report.context("machine", Machine.describe());
    report.context("method", run.equals(EnumSet.of(Section.shuffle))
        ? "Spark's shuffle and ours on a standalone cluster of two Workers, each in a JVM of its own; the shuffle rows'"
            + " notes say how"
        : String.format("loopback, client and server in this JVM; %d round(s) of %.1f s per run,"
        + " interleaved with the reference; wire reference: %s", rounds, duration,
        iperf ? "iperf3 (-P for streams)" : "raw socket with sendfile (iperf3 not installed, or --raw)"));
    Path work = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("gpudirect-bench");
    int steps = plannedSteps(run, iperf);
    try (Progress progress = progress(steps)) {
      progress.step("writing test files");
      Path data = work.resolve("fetch.bin");
      writeRandom(data, fileBytes);
      progress.stepDone();
      try (BlockServer server = BlockServer.builder().root(work).bindAddress("127.0.0.1").port(0).build()) {
        server.start();
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
        if (run.contains(Section.fetch)) {
          fetch(report, progress, address, data, fileBytes, iperf);
        }
        if (run.contains(Section.latency)) {
          latency(report, progress, address, data, fileBytes);
        }
        Path arrow = work.resolve("flight.arrow");
        if (run.contains(Section.flight) || run.contains(Section.spark)) {
          progress.step("writing the Arrow IPC file");
          try (RootAllocator allocator = new RootAllocator()) {
            ArrowData.write(arrow, arrowBytes, allocator);
          }
          progress.stepDone();
        }
        if (run.contains(Section.flight)) {
          flight(report, progress, address, arrow);
        }
        if (run.contains(Section.spark)) {
          spark(report, progress, work, server.port(), arrow);
        }
        if (run.contains(Section.joins)) {
          joins(report, progress, work, server.port());
        }
        if (run.contains(Section.memory)) {
          memory(report, progress, address, work, memoryBytes);
        }
        if (run.contains(Section.shuffle)) {
          shuffle(report, progress, work, shuffleBytes, (int) (shuffleExecutorBytes >> 20), shuffleWorkerPlaces);
        }
      }
    } finally {
      if (dir == null) {
        deleteRecursively(work);
      }
    }
    out.print(json ? report.json() + "\n" : report.table());
    out.flush();
    return 0;
  }

  /** The bench of a running server's link ({@link RemoteLink}). */
  private int remote() throws Exception {
    if (sections != null || dir != null || forceRaw) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--sections, --dir and --raw are for the loopback bench, not for a URI");
    }
    GpuDirectUri uri = GpuDirectUri.parse(remote);
    BenchReport report = new BenchReport();
    report.context("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    report.context("machine", Machine.describe() + " (the client; the server is " + uri.authority() + ")");
    report.context("method", String.format("gpudirect server at %s; %d round(s) of %.1f s per run,"
        + " each beside iperf3 -R to the same host (port %d) when one answers there", uri.authority(),
        rounds, duration, iperf3Port));
    // The connecting step; the link's own steps are planned once it knows what runs.
    try (Progress progress = progress(1)) {
      new RemoteLink(uri, client, duration, rounds, iperf3Port).run(report, progress);
    }
    java.io.PrintWriter out = spec.commandLine().getOut();
    out.print(json ? report.json() + "\n" : report.table());
    out.flush();
    return 0;
  }

  /** Where a test watches the bar; null: stderr. */
  PrintStream progressTo;

  private Progress progress(int steps) {
    return progressTo != null ? new Progress(progressTo, steps, true) : Progress.onTerminal(steps, !noProgress);
  }

  /** Every stepDone (or skip) the run makes, part by part: the bar ends full only if this is exact. */
  private int plannedSteps(Set<Section> run, boolean iperf) {
    int perRound = 0;
    int once = 1; // writing the test files
    if (run.contains(Section.fetch)) {
      perRound += 8 + (iperf ? 4 : 0);
      once++; // warming up
    }
    if (run.contains(Section.latency)) {
      perRound += 2;
      once++; // warming up
    }
    if (run.contains(Section.flight) || run.contains(Section.spark)) {
      once++; // writing the Arrow IPC file
    }
    if (run.contains(Section.flight)) {
      perRound += 2;
      once++; // warming up
    }
    if (run.contains(Section.spark)) {
      perRound += 3;
    }
    if (run.contains(Section.joins)) {
      once += 1 + 2 * joinPairs; // starting Spark and writing the tables, then the pairs
    }
    if (run.contains(Section.shuffle)) {
      once += 1 + (2 + (shuffleRapidsManager == null ? 0 : 1) + (shuffleVariant == null ? 0 : 1)
          + (shuffleDiskBound ? 1 : 0)) * shuffleRounds;
    }
    return perRound * rounds + once + (run.contains(Section.memory) ? 1 : 0);
  }

  // ---- target 1: fetch against the wire

  private void fetch(BenchReport report, Progress progress, InetSocketAddress server, Path data,
      long fileBytes, boolean iperfAvailable) throws Exception {
    boolean iperf = iperfAvailable;
    int chunk = 4 << 20;
    Measurement ours1 = Measurement.NONE;
    Measurement ours4 = Measurement.NONE;
    Measurement oursNoCrc = Measurement.NONE;
    Measurement ref1 = Measurement.NONE;
    Measurement ref4 = Measurement.NONE;
    Measurement file1 = Measurement.NONE;
    Measurement file4 = Measurement.NONE;
    Measurement raw1 = Measurement.NONE;
    Measurement raw4 = Measurement.NONE;
    Measurement rawKept4 = Measurement.NONE;
    Measurement rawChecked1 = Measurement.NONE;
    Measurement rawChecked4 = Measurement.NONE;
    String path = data.getFileName().toString();
    // Untimed: the JIT compiles our data path (and the JDK's socket code) before any clock
    // starts, at each setting the rounds time; iperf3, in C, has nothing to warm up.
    ClientConfig[] settings = {OurFetch.config(1, chunk, true), OurFetch.config(4, chunk, true),
        OurFetch.config(1, chunk, false)};
    progress.step("fetch: warming up");
    JitSettling.Warmed warmed = new JitSettling().warm(warmup(), Math.max(warmup(), Math.min(60, 10 * duration)),
        pass -> OurFetch.run(server, path, fileBytes, settings[pass % settings.length], Math.min(1, duration)));
    progress.stepDone();
    for (int r = 0; r < rounds; r++) {
      ours1 = ours1.plus(timed(progress, "fetch: ours, 1 stream", () -> OurFetch.run(server, path, fileBytes, OurFetch.config(1, chunk, true), duration)));
      // Each iperf3 run planned is run or, once iperf3 has failed, skipped.
      if (iperf) {
        Measurement m = iperf3(progress, "fetch: iperf3, 1 stream", 1);
        iperf = m != null;
        ref1 = iperf ? ref1.plus(m) : ref1;
      } else if (iperfAvailable) {
        progress.skip();
      }
      if (iperf) {
        Measurement m = iperf3File(progress, "fetch: iperf3 -F, 1 stream", data, 1);
        file1 = m != null ? file1.plus(m) : file1;
      } else if (iperfAvailable) {
        progress.skip();
      }
      raw1 = raw1.plus(timed(progress, "fetch: raw socket, 1 stream", () -> RawSocketBaseline.stream(data, 1, duration)));
      rawChecked1 = rawChecked1.plus(timed(progress, "fetch: raw socket, 1 stream, keeping its bytes, checking CRC32C",
          () -> RawSocketBaseline.streamKeeping(data, 1, duration, OurFetch.heldBytes(fileBytes), true)));
      ours4 = ours4.plus(timed(progress, "fetch: ours, 4 streams", () -> OurFetch.run(server, path, fileBytes, OurFetch.config(4, chunk, true), duration)));
      if (iperf) {
        Measurement m = iperf3(progress, "fetch: iperf3 -P 4", 4);
        iperf = m != null;
        ref4 = iperf ? ref4.plus(m) : ref4;
      } else if (iperfAvailable) {
        progress.skip();
      }
      if (iperf) {
        Measurement m = iperf3File(progress, "fetch: iperf3 -F -P 4", data, 4);
        file4 = m != null ? file4.plus(m) : file4;
      } else if (iperfAvailable) {
        progress.skip();
      }
      raw4 = raw4.plus(timed(progress, "fetch: raw socket, 4 streams", () -> RawSocketBaseline.stream(data, 4, duration)));
      rawKept4 = rawKept4.plus(timed(progress, "fetch: raw socket, 4 streams, keeping its bytes",
          () -> RawSocketBaseline.streamKeeping(data, 4, duration, OurFetch.heldBytes(fileBytes))));
      rawChecked4 = rawChecked4.plus(timed(progress, "fetch: raw socket, 4 streams, keeping its bytes, checking CRC32C",
          () -> RawSocketBaseline.streamKeeping(data, 4, duration, OurFetch.heldBytes(fileBytes), true)));
      oursNoCrc = oursNoCrc.plus(timed(progress, "fetch: ours, 1 stream, no CRC32C", () -> OurFetch.run(server, path, fileBytes, OurFetch.config(1, chunk, false), duration)));
    }
    String refName = iperf ? "iperf3" : "raw socket";
    if (!iperf) {
      ref1 = raw1;
      ref4 = raw4;
    }
    report.add(against(Row.of("fetch", "ours, 1 stream", ours1), refName + ", 1 stream", ours1, ref1)
        .withNote(beside(ours1, raw1, file1) + "; " + versus(ours1, rawChecked1, "the raw socket keeping its bytes and checking CRC32C")
            + "; " + warmed.describe()));
    report.add(against(Row.of("fetch", "ours, 4 streams", ours4), refName + ", 4 streams", ours4, ref4)
        .withNote(beside(ours4, raw4, file4)
            + "; " + versus(ours4, rawKept4, "the raw socket keeping its bytes in as much memory as ours")
            + "; " + versus(ours4, rawChecked4, "that raw socket checking CRC32C")));
    report.add(Row.of("fetch", "ours, 1 stream, CRC32C off", oursNoCrc)
        .withNote("for the profile: what the checksum costs; not a target"));
    if (iperf) {
      report.add(Row.of("fetch", "iperf3, 1 stream", ref1));
      report.add(Row.of("fetch", "iperf3 -P 4", ref4));
    }
    if (file1.bytes() > 0) {
      report.add(Row.of("fetch", "iperf3 -F (the same file), 1 stream", file1)
          .withNote("the sender reads the file, as a file server must; each run sends it once"));
    }
    if (file4.bytes() > 0) {
      report.add(Row.of("fetch", "iperf3 -F -P 4 (the same file)", file4));
    }
    report.add(Row.of("fetch", "raw socket (sendfile), 1 stream", raw1));
    report.add(Row.of("fetch", "raw socket (sendfile), 1 stream, keeping its bytes, checking CRC32C", rawChecked1)
        .withNote("its reader fills " + (OurFetch.heldBytes(fileBytes) >> 20) + " MiB of buffers in turn, as ours"
            + " hold, and works out the CRC32C of each 4 MiB it fills, read by read, as our client checks each chunk's: the least"
            + " a fetch that keeps and verifies its bytes costs here, with no protocol"));
    report.add(Row.of("fetch", "raw socket (sendfile), 4 streams", raw4));
    report.add(Row.of("fetch", "raw socket (sendfile), 4 streams, keeping its bytes", rawKept4)
        .withNote("its readers fill " + (OurFetch.heldBytes(fileBytes) >> 20) + " MiB of buffers in turn, as ours"
            + " hold, where the raw socket's each discard into one 4 MiB buffer that stays in the caches"));
    report.add(Row.of("fetch", "raw socket (sendfile), 4 streams, keeping its bytes, checking CRC32C", rawChecked4));
  }

  /** "against WHAT: 0.84x, CPU 1.16x": ours' throughput and CPU per GB over {@code reference}'s. */
  private static String versus(Measurement ours, Measurement reference, String what) {
    return String.format(Locale.ROOT, "against %s: %.2fx, CPU %.2fx", what,
        ratio(ours.gbitPerSecond(), reference.gbitPerSecond()),
        ratio(ours.cpuSecondsPerGb(), reference.cpuSecondsPerGb()));
  }

  /** iperf3 -F of the fetched file, or null (and a warning) when it fails: the row is left out. */
  private Measurement iperf3File(Progress progress, String what, Path file, int streams) {
    try {
      return timed(progress, what, () -> Iperf3.runFile(file, streams, duration));
    } catch (Exception e) {
      System.err.println("\ngpudirect bench: iperf3 -F failed, so the report has no row for it: "
          + e.getMessage());
      return null;
    }
  }

  /**
   * The row's note: ours against the raw socket (throughput and CPU per GB) and against iperf3 -F
   * on the same file, from the same rounds, with the targets they are held to.
   */
  private static String beside(Measurement ours, Measurement raw, Measurement file) {
    String s = versus(ours, raw, "the raw socket");
    if (file.bytes() > 0) {
      s += "; " + versus(ours, file, "iperf3 -F");
    }
    return s + " (target: >= 0.9x the raw socket at <= 1.2x its CPU; >= 1.0x iperf3 -F)";
  }

  /** One iperf3 run, or null (and a warning) when it fails: the raw socket then stands in. */
  private Measurement iperf3(Progress progress, String what, int streams) {
    try {
      return timed(progress, what, () -> Iperf3.run(streams, duration));
    } catch (Exception e) {
      System.err.println("\ngpudirect bench: iperf3 failed, so the raw socket baseline is the"
          + " wire reference: " + e.getMessage());
      return null;
    }
  }

  private static Row against(Row row, String ref, Measurement ours, Measurement reference) {
    double t = ratio(ours.gbitPerSecond(), reference.gbitPerSecond());
    double c = ratio(ours.cpuSecondsPerGb(), reference.cpuSecondsPerGb());
    return row.against(ref, t, c, "tput >= 0.95x, CPU <= 1.2x", t >= 0.95 && c <= 1.2);
  }

  // ---- target 3: 4 KiB latency

  private void latency(BenchReport report, Progress progress, InetSocketAddress server, Path data,
      long fileBytes) throws Exception {
    Latencies ours = new Latencies();
    Latencies raw = new Latencies();
    String path = data.getFileName().toString();
    // As for every other part, our path runs untimed first, so that what is timed is compiled.
    progress.step("latency: warming up");
    OurLatency.run(server, path, fileBytes, 4096, true, warmup(), -1);
    progress.stepDone();
    for (int r = 0; r < rounds; r++) {
      long seed = r;
      progress.step("latency: ours, 4 KiB reads");
      ours.addAll(OurLatency.run(server, path, fileBytes, 4096, true, duration, seed));
      progress.stepDone();
      progress.step("latency: raw socket ping-pong");
      raw.addAll(RawSocketBaseline.pingPong(data, fileBytes, 4096, duration, seed));
      progress.stepDone();
    }
    double p50 = ratio(ours.percentileMicros(50), raw.percentileMicros(50));
    report.add(Row.latency("latency", "ours, 4 KiB at random offsets", ours)
        .against("raw socket ping-pong", p50, Double.NaN, "p50 <= 1.2x", p50 <= 1.2)
        .withNote(ours.count() + " reads, CRC32C on; ratio = p50 / reference p50"));
    report.add(Row.latency("latency", "raw socket ping-pong, 4 KiB", raw)
        .withNote(raw.count() + " round trips, answer read with pread from the same file"));
  }

  // ---- target 2: Arrow Flight

  private void flight(BenchReport report, Progress progress, InetSocketAddress server, Path arrow)
      throws Exception {
    long bytes = Files.size(arrow);
    Measurement ours = Measurement.NONE;
    Measurement flight = Measurement.NONE;
    progress.step("flight: starting the DoGet server");
    try (FlightReference ref = new FlightReference(arrow)) {
      timed(progress, "flight: warming up", () -> ref.run(warmup()));
      for (int r = 0; r < rounds; r++) {
        ours = ours.plus(timed(progress, "flight: ours, the Arrow IPC file", () -> OurFetch.run(server,
            arrow.getFileName().toString(), bytes, OurFetch.config(4, 4 << 20, true), duration)));
        flight = flight.plus(timed(progress, "flight: Arrow Flight DoGet", () -> ref.run(duration)));
      }
    }
    double t = ratio(ours.gbitPerSecond(), flight.gbitPerSecond());
    double c = ratio(ours.cpuSecondsPerGb(), flight.cpuSecondsPerGb());
    report.add(Row.of("flight", "ours, Arrow IPC file, 4 streams", ours)
        .against("Arrow Flight DoGet", t, c, "tput >= 2x, CPU <= 0.5x", t >= 2 && c <= 0.5));
    report.add(Row.of("flight", "Arrow Flight DoGet, same data", flight)
        .withNote("batches held in the Flight server's memory; bytes = Arrow buffers received"));
  }

  // ---- target 4: Spark end to end

  private void spark(BenchReport report, Progress progress, Path work, int port, Path arrow)
      throws Exception {
    progress.step("spark: starting Spark, writing " + sparkRows + " rows");
    String base = "gpudirect://127.0.0.1:" + port;
    Measurement local = Measurement.NONE;
    Measurement remote = Measurement.NONE;
    Measurement ipc = Measurement.NONE;
    long arrowBytes = Files.size(arrow);
    try (SparkScan spark = new SparkScan(work, sparkRows)) {
      // One untimed pass of each: Spark's and the JIT's warm-up is nobody's cost.
      spark.local();
      spark.gpudirect(base);
      spark.gpudirectArrow(base + "/" + arrow.getFileName(), arrowBytes);
      for (int r = 0; r < rounds; r++) {
        local = local.plus(timed(progress, "spark: spark.read.parquet", spark::local));
        remote = remote.plus(timed(progress, "spark: gpudirect Parquet scan", () -> spark.gpudirect(base)));
        ipc = ipc.plus(timed(progress, "spark: gpudirect Arrow IPC scan", () -> spark.gpudirectArrow(base + "/" + arrow.getFileName(), arrowBytes)));
      }
      double time = ratio(remote.seconds(), local.seconds());
      report.add(Row.of("spark", "gpudirect scan, Parquet", remote)
          .against("spark.read.parquet", time, ratio(remote.cpuSecondsPerGb(), local.cpuSecondsPerGb()),
              "time <= 1.1x", time <= 1.1)
          .withNote(String.format("%,d rows, %s of Parquet; %.2f s per query vs %.2f s; ratio = time / reference time",
              sparkRows, Sizes.show(spark.parquetBytes()), remote.seconds() / rounds, local.seconds() / rounds)));
      report.add(Row.of("spark", "spark.read.parquet, local files", local));
      report.add(Row.of("spark", "gpudirect scan, Arrow IPC", ipc)
          .withNote(String.format("%s Arrow IPC file, %.2f s per query", Sizes.show(arrowBytes), ipc.seconds() / rounds)));
    }
  }

  // ---- issue 16: joins of small tables, where the plan (broadcast or not) decides the time

  private void joins(BenchReport report, Progress progress, Path work, int port) throws Exception {
    progress.step("joins: starting Spark, writing a " + joinRows + "-row fact table and four dimensions");
    Measurement local = Measurement.NONE;
    Measurement remote = Measurement.NONE;
    double[] ratios = new double[joinPairs];
    try (SparkJoins joins = new SparkJoins(work, joinRows)) {
      joins.register("gpudirect://127.0.0.1:" + port);
      // Untimed: Spark's and the JIT's warm-up; also what the note says about the plans.
      String plans = "plans: gpudirect " + joins.joins("remote_") + ", spark.read.parquet " + joins.joins("local_");
      progress.stepDone();
      for (int i = 0; i < joinPairs; i++) {
        // Each pair in the other order from the last, so that neither side always runs warm.
        Measurement l;
        Measurement g;
        if (i % 2 == 0) {
          l = timed(progress, "joins: spark.read.parquet", joins::local);
          g = timed(progress, "joins: gpudirect", joins::gpudirect);
        } else {
          g = timed(progress, "joins: gpudirect", joins::gpudirect);
          l = timed(progress, "joins: spark.read.parquet", joins::local);
        }
        local = local.plus(l);
        remote = remote.plus(g);
        ratios[i] = ratio(g.seconds(), l.seconds());
      }
      double median = median(ratios);
      report.add(Row.of("joins", "gpudirect, fact + 4 dimensions", remote)
          .against("spark.read.parquet", median, ratio(remote.cpuSecondsPerGb(), local.cpuSecondsPerGb()),
              "time <= 1.05x", median <= 1.05)
          .withNote(String.format("%,d fact rows, %s of Parquet; %.2f s per query vs %.2f s; ratio = median of %d"
              + " interleaved pairs' time ratios; %s", joinRows, Sizes.show(joins.bytes()),
              remote.seconds() / joinPairs, local.seconds() / joinPairs, joinPairs, plans)));
      report.add(Row.of("joins", "spark.read.parquet, local files", local));
    }
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    java.util.Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  // ---- issue 29: Spark's shuffle over our transport against Spark's own

  /** Each --shuffle-worker as its address and command prefix. */
  private List<List<String>> shuffleWorkerPlaces() {
    List<List<String>> places = new java.util.ArrayList<>();
    for (String w : shuffleWorkers == null ? List.<String>of() : shuffleWorkers) {
      List<String> words = List.of(w.trim().split("\\s+"));
      if (words.get(0).isEmpty()) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--shuffle-worker must start with the Worker's address, as in '10.201.0.2 ip netns exec NS', not '" + w + "'");
      }
      places.add(words);
    }
    return places;
  }

  private void shuffle(BenchReport report, Progress progress, Path work, long bytes, int executorMemoryMb,
      List<List<String>> workerPlaces) throws Exception {
    progress.step("shuffle: starting a standalone cluster");
    StandaloneCluster.Builder builder = StandaloneCluster.builder(work.resolve("shuffle-cluster")).host(shuffleHost)
        .workers(workerPlaces.isEmpty() ? 2 : workerPlaces.size())
        .executorCores(shuffleExecutorCores).executorMemoryMb(executorMemoryMb);
    for (int i = 0; i < workerPlaces.size(); i++) {
      List<String> words = workerPlaces.get(i);
      builder.placeWorker(i, words.get(0), words.subList(1, words.size()));
    }
    try (StandaloneCluster cluster = builder.start()) {
      progress.stepDone();
      shuffle(report, progress, cluster, bytes);
    }
  }

  private void shuffle(BenchReport report, Progress progress, StandaloneCluster cluster, long bytes) throws Exception {
    int n = shuffleRounds;
    SparkShuffle.Manager rapidsManager = shuffleRapidsManager == null ? null
        : SparkShuffle.Manager.rapidsMultithreaded(shuffleRapidsManager);
    SparkShuffle.Manager variant = shuffleVariant == null ? null : SparkShuffle.Manager.gpudirectWith(shuffleVariant);
    List<SparkShuffle.Manager> managers = new ArrayList<>(List.of(SparkShuffle.Manager.SPARK,
        SparkShuffle.Manager.GPUDIRECT));
    if (rapidsManager != null) {
      managers.add(rapidsManager);
    }
    if (variant != null) {
      managers.add(variant);
    }
    if (shuffleDiskBound) {
      managers.add(SparkShuffle.Manager.SPARK_DISK);
    }
    Map<String, String> conf = shuffleConf == null ? Map.of() : shuffleConf;
    Map<SparkShuffle.Manager, SparkShuffle.Run[]> runs = new java.util.LinkedHashMap<>();
    managers.forEach(m -> runs.put(m, new SparkShuffle.Run[n]));
    String rows = null;
    for (int i = 0; i < n; i++) {
      // Each round starts with the next manager, so that none always runs first.
      for (int j = 0; j < managers.size(); j++) {
        SparkShuffle.Manager m = managers.get((i + j) % managers.size());
        progress.step("shuffle: " + m.label() + ", round " + (i + 1));
        SparkShuffle.Run r = SparkShuffle.run(cluster, m, conf, shuffleJob, bytes);
        progress.stepDone();
        if (shuffleTimeline != null) {
          double start = r.started().toEpochMilli() / 1e3;
          Files.writeString(shuffleTimeline, String.format(Locale.ROOT, "%s %d %.3f %.3f %d%n",
              m.key(), i + 1, start, start + r.seconds(), r.shuffleBytes()),
              StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        runs.get(m)[i] = r;
        if (rows == null) {
          rows = r.rows();
        } else if (!rows.equals(r.rows())) {
          throw new IllegalStateException("The shuffle job gave " + r.rows() + " with the " + m.label() + " in round "
              + (i + 1) + " and " + rows + " before: the shuffles disagree");
        }
      }
    }
    SparkShuffle.Run[] ours = runs.get(SparkShuffle.Manager.GPUDIRECT);
    SparkShuffle.Run[] spark = runs.get(SparkShuffle.Manager.SPARK);
    String on = conf.isEmpty() ? "" : "; with " + conf;
    double time = median(ratios(ours, spark, SparkShuffle.Run::seconds));
    double wait = median(ratios(ours, spark, SparkShuffle.Run::fetchWaitSeconds));
    double cpu = median(ratios(ours, spark, SparkShuffle.Run::cpuSecondsPerGb));
    boolean met = wait <= 0.5 && time <= 0.9 && cpu <= 1.0;
    report.add(Row.of("shuffle", "gpudirect shuffle, " + shuffleJob, medians(ours))
        .against("Spark's Netty shuffle", time, cpu, "fetch wait <= 0.5x, time <= 0.9x, CPU/GB <= 1x", met)
        .withNote(String.format(Locale.ROOT, "%s shuffled; %s%s; median of %d rounds, alternated: job %.2f s vs %.2f s,"
            + " fetch wait %.2f s vs %.2f s (ratio %.2f), map phase %.2f vs %.2f s (%s vs %s), reduce stages %.2f vs %.2f s (%s vs %s),"
            + " executors' CPU %.2f vs %.2f s/GB; ratios = medians of the"
            + " rounds' ratios; CPU = the executor JVMs' process CPU; Gbit/s = shuffled bytes / job time;"
            + " each round's job time and CPU/GB, ours then Spark's: %s",
            Sizes.show(ours[0].shuffleBytes()), SparkShuffle.describe(cluster, shuffleJob, bytes), on, n,
            median(each(ours, SparkShuffle.Run::seconds)), median(each(spark, SparkShuffle.Run::seconds)),
            median(each(ours, SparkShuffle.Run::fetchWaitSeconds)), median(each(spark, SparkShuffle.Run::fetchWaitSeconds)),
            wait, median(each(ours, SparkShuffle.Run::mapSeconds)), median(each(spark, SparkShuffle.Run::mapSeconds)),
            mapTasks(ours), mapTasks(spark), median(each(ours, SparkShuffle.Run::reduceSeconds)), median(each(spark, SparkShuffle.Run::reduceSeconds)),
            reduceTasks(ours), reduceTasks(spark),
            median(each(ours, SparkShuffle.Run::cpuSecondsPerGb)),
            median(each(spark, SparkShuffle.Run::cpuSecondsPerGb)), rounds(ours, spark))));
    report.add(Row.of("shuffle", "Spark's Netty shuffle, " + shuffleJob, medians(spark))
        .withNote("spark.shuffle.readHostLocalDisk=false, so that blocks of the other executor on this host cross the"
            + " network as ours do (by default Spark reads them from its disk)"));
    // Issue 29's goal with the RAPIDS Accelerator: ours at or under the better of the two others.
    double best = rapidsManager == null ? Double.NaN : Math.min(median(each(spark, SparkShuffle.Run::seconds)),
        median(each(runs.get(rapidsManager), SparkShuffle.Run::seconds)));
    if (rapidsManager != null) {
      SparkShuffle.Run[] rapids = runs.get(rapidsManager);
      double ofBest = median(each(ours, SparkShuffle.Run::seconds)) / best;
      report.add(Row.of("shuffle", "RAPIDS shuffle (MULTITHREADED), " + shuffleJob, medians(rapids))
          .withNote(String.format(Locale.ROOT, "%s; %s; gpudirect's median job time %.2fx the better of Spark's and"
              + " this (goal <= 1x: %s); each round's job time and CPU/GB, ours then RAPIDS': %s", shuffleRapidsManager,
              phases(rapids), ofBest, ofBest <= 1.0 ? "met" : "not met", rounds(ours, rapids))));
    }
    if (variant != null) {
      report.add(variantRow(variant, runs.get(variant), ours, best, shuffleJob));
    }
    if (shuffleDiskBound) {
      report.add(diskBoundRow(runs.get(SparkShuffle.Manager.SPARK_DISK), spark, ours, shuffleJob));
    }
  }

  /**
   * Spark's shuffle with no network (its reducers reading the other executor's files), against its
   * Netty shuffle: what no transport can beat on this host, so the bound of the goal's job time.
   */
  private static Row diskBoundRow(SparkShuffle.Run[] disk, SparkShuffle.Run[] spark, SparkShuffle.Run[] ours,
      SparkShuffle.Job job) {
    double time = median(ratios(disk, spark, SparkShuffle.Run::seconds));
    double cpu = median(ratios(disk, spark, SparkShuffle.Run::cpuSecondsPerGb));
    return Row.of("shuffle", SparkShuffle.Manager.SPARK_DISK.label() + ", " + job, medians(disk))
        .comparedWith("Spark's Netty shuffle", time, cpu)
        .withNote(String.format(Locale.ROOT, "%s; the least job time a transport could give here: %.2fx Spark's Netty"
            + " shuffle (the goal asks 0.9x of gpudirect's), gpudirect's %.2fx this (medians of the rounds' ratios);"
            + " each round's job time and CPU/GB, this then Spark's Netty shuffle: %s", phases(disk), time,
            median(ratios(ours, disk, SparkShuffle.Run::seconds)), rounds(disk, spark)));
  }

  /** A side's medians of job time, fetch wait, map phase, reduce stages and CPU per GB, as a note says them. */
  private static String phases(SparkShuffle.Run[] runs) {
    return String.format(Locale.ROOT, "job %.2f s, fetch wait %.2f s, map phase %.2f s (%s), reduce stages %.2f s (%s),"
        + " executors' CPU %.2f s/GB (medians)",
        median(each(runs, SparkShuffle.Run::seconds)), median(each(runs, SparkShuffle.Run::fetchWaitSeconds)),
        median(each(runs, SparkShuffle.Run::mapSeconds)), mapTasks(runs), median(each(runs, SparkShuffle.Run::reduceSeconds)),
        reduceTasks(runs),
        median(each(runs, SparkShuffle.Run::cpuSecondsPerGb)));
  }

  /** Medians of the map tasks' summed times ({@link SparkShuffle.Tasks}), as a note says them. */
  private static String mapTasks(SparkShuffle.Run[] runs) {
    return tasks(runs, SparkShuffle.Run::mapTasks, "shuffle write");
  }

  /** Medians of the reduce tasks' summed times, as a note says them. */
  private static String reduceTasks(SparkShuffle.Run[] runs) {
    return tasks(runs, SparkShuffle.Run::reduceTasks, "fetch wait");
  }

  private static String tasks(SparkShuffle.Run[] runs, Function<SparkShuffle.Run, SparkShuffle.Tasks> phase,
      String shuffleTime) {
    return String.format(Locale.ROOT, "its tasks ran %.2f s: their threads' CPU %.2f s, GC %.2f s, %s %.2f s",
        median(each(runs, r -> phase.apply(r).runSeconds())), median(each(runs, r -> phase.apply(r).cpuSeconds())),
        median(each(runs, r -> phase.apply(r).gcSeconds())), shuffleTime,
        median(each(runs, r -> phase.apply(r).shuffleSeconds())));
  }

  /**
   * The variant of ours, against ours without it (the ratio) and, with the plugin's side, the
   * better of Spark's and the plugin's shuffles (issue 29's goal).
   */
  private static Row variantRow(SparkShuffle.Manager variant, SparkShuffle.Run[] runs, SparkShuffle.Run[] ours,
      double best, SparkShuffle.Job job) {
    double time = median(ratios(runs, ours, SparkShuffle.Run::seconds));
    double cpu = median(ratios(runs, ours, SparkShuffle.Run::cpuSecondsPerGb));
    return Row.of("shuffle", variant.label() + ", " + job, medians(runs))
        .comparedWith("gpudirect shuffle", time, cpu)
        .withNote(String.format(Locale.ROOT, "%s; ratios = medians of the rounds' ratios to gpudirect's without"
            + " the variant%s; each round's job time and CPU/GB, the variant's then gpudirect's: %s", phases(runs),
            Double.isNaN(best) ? "" : String.format(Locale.ROOT, "; median job time %.2fx the better of Spark's and"
                + " the RAPIDS shuffle (goal <= 1x)", median(each(runs, SparkShuffle.Run::seconds)) / best),
            rounds(runs, ours)));
  }

  /** Each round's figures, so that the report shows their spread beside the medians. */
  private static String rounds(SparkShuffle.Run[] ours, SparkShuffle.Run[] spark) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < ours.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.1f/%.1f s %.1f/%.1f", ours[i].seconds(),
          spark[i].seconds(), ours[i].cpuSecondsPerGb(), spark[i].cpuSecondsPerGb()));
    }
    return sb.toString();
  }

  /** A run's medians as a measurement: shuffled bytes in the job's time, with the executors' CPU. */
  private static Measurement medians(SparkShuffle.Run[] runs) {
    return new Measurement((long) median(each(runs, r -> (double) r.shuffleBytes())),
        median(each(runs, SparkShuffle.Run::seconds)), median(each(runs, SparkShuffle.Run::executorCpuSeconds)));
  }

  private static double[] each(SparkShuffle.Run[] runs, java.util.function.ToDoubleFunction<SparkShuffle.Run> f) {
    return java.util.Arrays.stream(runs).mapToDouble(f).toArray();
  }

  private static double[] ratios(SparkShuffle.Run[] ours, SparkShuffle.Run[] ref,
      java.util.function.ToDoubleFunction<SparkShuffle.Run> f) {
    double[] r = new double[ours.length];
    for (int i = 0; i < r.length; i++) {
      r[i] = ratio(f.applyAsDouble(ours[i]), f.applyAsDouble(ref[i]));
    }
    return r;
  }

  // ---- target 5: memory bounded by the window

  private void memory(BenchReport report, Progress progress, InetSocketAddress server, Path work,
      long bytes) throws Exception {
    progress.step("memory: " + Sizes.show(bytes) + " with -Xmx" + MemoryBound.MAX_HEAP + " in a child JVM");
    Path sparse = work.resolve("memory.bin");
    try (RandomAccessFile f = new RandomAccessFile(sparse.toFile(), "rw")) {
      f.setLength(bytes);
    }
    MemoryBound.Result r = MemoryBound.run(server, sparse.getFileName().toString(), bytes, work);
    progress.stepDone();
    long limitDirect = Sizes.parse(MemoryBound.MAX_DIRECT);
    boolean ok = r.peakHeap() < Sizes.parse(MemoryBound.MAX_HEAP) && r.peakDirect() <= limitDirect;
    report.add(Row.of("memory", "ours, " + Sizes.show(bytes) + " file, -Xmx" + MemoryBound.MAX_HEAP, r.fetch())
        .against("its limits", Double.NaN, Double.NaN, "reads whole, peaks < limits", ok)
        .withNote(String.format("peak heap %.0f MiB of %s, peak direct %.0f MiB of %s (its two 32 MiB destination buffers; the 64 MiB window bounds what is requested, the buffers what is held)",
            r.peakHeap() / 1048576.0, MemoryBound.MAX_HEAP, r.peakDirect() / 1048576.0, MemoryBound.MAX_DIRECT)));
  }

  // ---- helpers

  private static Measurement timed(Progress progress, String what, Callable<Measurement> run) throws Exception {
    progress.step(what);
    try {
      return run.call();
    } finally {
      progress.stepDone();
    }
  }

  /** Seconds of untimed warm-up before a part's first timed run. */
  private double warmup() {
    return Math.min(2, duration);
  }

  private static double ratio(double a, double b) {
    return b > 0 ? a / b : Double.NaN;
  }

  static void writeRandom(Path file, long bytes) throws IOException {
    ByteBuffer block = ByteBuffer.allocateDirect(8 << 20);
    byte[] random = new byte[8 << 20];
    new Random(42).nextBytes(random);
    block.put(random).flip();
    try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      long written = 0;
      while (written < bytes) {
        ByteBuffer b = block.duplicate();
        b.limit((int) Math.min(b.capacity(), bytes - written));
        while (b.hasRemaining()) {
          written += out.write(b);
        }
      }
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
