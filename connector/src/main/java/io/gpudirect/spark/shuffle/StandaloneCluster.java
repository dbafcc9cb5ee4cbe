package io.gpudirect.spark.shuffle;

import java.io.IOException;
import java.io.Writer;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.MutableURLClassLoader;

/**
 * A real Spark standalone cluster on this machine, for the shuffle's tests and its bench: a
 * Master and N Workers, each in a JVM of its own, and each application's executors (one per
 * Worker) in JVMs the Workers start, so that reducers fetch most blocks from another executor, as
 * on a cluster (never {@code local[*]}, where every block is local). The driver is the calling
 * JVM. Everything runs from this JVM's class path (Maven's jars and class folders, or the CLI's):
 * no Spark distribution is needed, as each Worker's Spark home is a folder whose {@code jars} is
 * empty and its executors' class path comes from {@code SPARK_DIST_CLASSPATH}. Each daemon logs
 * to {@code DIR/NAME.log}; Worker i keeps its executors' folders under {@code DIR/worker-i/work}
 * and their local directories (block managers, shuffle files) under {@code DIR/worker-i/local}.
 *
 * <p>Closing it stops the application it started, then the Workers (and their executors), then
 * the Master; a shutdown hook kills whatever is left if the JVM exits first.
 */
public final class StandaloneCluster implements AutoCloseable {
  private static final Pattern MASTER_URL = Pattern.compile("Starting Spark master at (spark://\\S+)");
  /** A Worker that registers before this ignores the Master's "standby" answer and tries again only 5 to 15 s later. */
  private static final Pattern LEADING = Pattern.compile("I have been elected leader");
  private static final Pattern REGISTERED = Pattern.compile("Successfully registered with master");
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);

  private final Path dir;
  private final String host;
  private final int executorCores;
  private final int executorMemoryMb;
  private final Map<String, String> conf;
  private final List<Placement> places;
  private final String masterUrl;
  private final DaemonJvm master;
  private final List<DaemonJvm> workers;
  private final Thread killer;
  private volatile SparkSession application;

  private StandaloneCluster(Builder spec, String masterUrl, DaemonJvm master, List<DaemonJvm> workers, Thread killer) {
    this.dir = spec.dir;
    this.host = spec.host;
    this.executorCores = spec.executorCores;
    this.executorMemoryMb = spec.executorMemoryMb;
    this.conf = Map.copyOf(spec.conf);
    this.places = java.util.stream.IntStream.range(0, spec.workers).mapToObj(spec::placement).toList();
    this.masterUrl = masterUrl;
    this.master = master;
    this.workers = workers;
    this.killer = killer;
  }

  /** A cluster under {@code dir}: two Workers, one core and 768 MiB per executor, all on 127.0.0.1. */
  public static Builder builder(Path dir) {
    return new Builder(dir);
  }

  /** How a cluster is made; {@link #start()} makes one. */
  public static final class Builder {
    private final Path dir;
    private int workers = 2;
    private int executorCores = 1;
    private int executorMemoryMb = 768;
    private String host = "127.0.0.1";
    private final Map<Integer, Placement> placements = new LinkedHashMap<>();
    private final Map<String, String> conf = new LinkedHashMap<>();

    private Builder(Path dir) {
      this.dir = dir;
    }

    /** How many Workers, each running one executor of each application. */
    public Builder workers(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("A cluster needs at least one Worker, not " + n);
      }
      workers = n;
      return this;
    }

    /** Cores of each executor, which are its Worker's cores. */
    public Builder executorCores(int cores) {
      if (cores < 1) {
        throw new IllegalArgumentException("An executor needs at least one core, not " + cores);
      }
      executorCores = cores;
      return this;
    }

    /** Each executor's heap ({@code spark.executor.memory}), which is its Worker's memory; its direct memory is half as much. */
    public Builder executorMemoryMb(int mb) {
      if (mb < 256) {
        throw new IllegalArgumentException("An executor needs at least 256 MiB of memory, not " + mb + " MiB");
      }
      executorMemoryMb = mb;
      return this;
    }

    /** The address the Master, the driver and (unless placed) the Workers bind to and are reached at. */
    public Builder host(String address) {
      host = address;
      return this;
    }

    /**
     * Worker {@code index} (from 0) bound to {@code address}, its JVM started behind
     * {@code commandPrefix} ({@code ip netns exec NS}, say, to run it in a network namespace).
     */
    public Builder placeWorker(int index, String address, List<String> commandPrefix) {
      placements.put(index, new Placement(address, List.copyOf(commandPrefix)));
      return this;
    }

    /**
     * A setting the daemons and every application share, such as {@code spark.authenticate}
     * and its secret, which a standalone cluster's Master, Workers and applications must agree on.
     */
    public Builder conf(String key, String value) {
      conf.put(key, value);
      return this;
    }

    /** Starts the Master, then the Workers; returns once every Worker has registered. */
    public StandaloneCluster start() throws IOException, InterruptedException {
      for (Integer i : placements.keySet()) {
        if (i < 0 || i >= workers) {
          throw new IllegalArgumentException("Worker " + i + " is placed, but the cluster has Workers 0 to " + (workers - 1));
        }
      }
      return StandaloneCluster.start(this);
    }

    private Placement placement(int worker) {
      return placements.getOrDefault(worker, new Placement(host, List.of()));
    }
  }

  private record Placement(String host, List<String> commandPrefix) {}

  private static StandaloneCluster start(Builder spec) throws IOException, InterruptedException {
    Path dir = Files.createDirectories(spec.dir);
    Path log4j = writeLog4jConfig(dir.resolve("log4j2-daemons.properties"));
    Path properties = writeProperties(dir.resolve("daemons.properties"), spec.conf);
    // What the JVM's exit kills if no one closes the cluster first.
    List<DaemonJvm> started = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread killer = new Thread(() -> started.forEach(DaemonJvm::kill), "standalone-cluster-killer");
    Runtime.getRuntime().addShutdownHook(killer);
    DaemonJvm master = null;
    List<DaemonJvm> workers = new ArrayList<>();
    try {
      // Port 0 everywhere: the Master says which port it took, and the Workers are told.
      master = DaemonJvm.start("the Master", List.of(), Master.class, List.of("--host", spec.host,
          "--port", "0", "--webui-port", "0", "--properties-file", properties.toString()),
          Map.of("SPARK_LOCAL_IP", spec.host), dir.resolve("master.log"), log4j);
      started.add(master);
      String url = master.awaitLine(MASTER_URL, Duration.ofSeconds(120)).group(1);
      master.awaitLine(LEADING, Duration.ofSeconds(60));
      for (int i = 0; i < spec.workers; i++) {
        DaemonJvm worker = startWorker(spec, i, url, properties, log4j);
        started.add(worker);
        workers.add(worker);
      }
      for (DaemonJvm worker : workers) {
        worker.awaitLine(REGISTERED, Duration.ofSeconds(120));
      }
      return new StandaloneCluster(spec, url, master, List.copyOf(workers), killer);
    } catch (IOException | InterruptedException | RuntimeException e) {
      stop(master, workers);
      forgetShutdownHook(killer);
      throw e;
    }
  }

  private static DaemonJvm startWorker(Builder spec, int i, String masterUrl, Path properties, Path log4j)
      throws IOException {
    Path home = Files.createDirectories(spec.dir.resolve("worker-" + i));
    // A Spark home as the launcher needs one to build an executor's command: its jars folder is
    // empty, and the executors' class path is this JVM's, as a distribution "without Hadoop" gives its own.
    Files.createDirectories(home.resolve("jars"));
    Placement at = spec.placement(i);
    Map<String, String> env = Map.of(
        // Where its web UI binds (else every address), and its executors, which inherit it, too.
        "SPARK_LOCAL_IP", at.host(),
        "SPARK_HOME", home.toString(),
        "SPARK_DIST_CLASSPATH", System.getProperty("java.class.path"),
        "SPARK_SCALA_VERSION", scalaBinaryVersion(),
        "SPARK_LOCAL_DIRS", Files.createDirectories(home.resolve("local")).toString());
    return DaemonJvm.start("Worker " + i, at.commandPrefix(), Worker.class, List.of("--host", at.host(),
        "--port", "0", "--webui-port", "0", "--cores", String.valueOf(spec.executorCores),
        "--memory", spec.executorMemoryMb + "m", "--work-dir", Files.createDirectories(home.resolve("work")).toString(),
        "--properties-file", properties.toString(), masterUrl), env, spec.dir.resolve("worker-" + i + ".log"), log4j);
  }

  /** The Master's URL, {@code spark://HOST:PORT}. */
  public String masterUrl() {
    return masterUrl;
  }

  /** What it is, for a report's method line. */
  public String describe() {
    String where = places.stream().allMatch(p -> p.host().equals(host) && p.commandPrefix().isEmpty()) ? "on " + host
        : "the Master on " + host + ", the Workers on " + places.stream().map(p -> p.host()
            + (p.commandPrefix().isEmpty() ? "" : " (behind '" + String.join(" ", p.commandPrefix()) + "')"))
            .collect(java.util.stream.Collectors.joining(", "));
    return String.format("a standalone Master and %d Workers, each in a JVM of its own, one executor of %d core(s) and"
        + " %d MiB of heap per Worker, %s", workers.size(), executorCores, executorMemoryMb, where);
  }

  /**
   * A session builder for an application on this cluster: one executor on each Worker with all
   * its cores and memory, no UI, broadcast joins off, and the cluster's shared settings; the
   * caller adds its own and calls {@link #start(SparkSession.Builder)}.
   */
  public SparkSession.Builder application(String name) {
    SparkSession.Builder b = SparkSession.builder()
        .appName(name)
        .master(masterUrl)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", host)
        .config("spark.executor.cores", String.valueOf(executorCores))
        .config("spark.executor.memory", executorMemoryMb + "m")
        .config("spark.executor.extraJavaOptions", "-XX:MaxDirectMemorySize=" + (executorMemoryMb / 2) + "m")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1");
    conf.forEach(b::config);
    return b;
  }

  /**
   * Creates the application {@code builder} describes and waits until its executors, one per
   * Worker, have registered; fails naming the Workers' logs. Closing the cluster stops it.
   */
  public SparkSession start(SparkSession.Builder builder) throws InterruptedException {
    // As spark-submit does for a driver: a context class loader that jars can be added to. The
    // RAPIDS Accelerator adds its Spark version's classes to it and fails on the JVM's own.
    if (!(Thread.currentThread().getContextClassLoader() instanceof URLClassLoader)) {
      Thread.currentThread().setContextClassLoader(
          new MutableURLClassLoader(new URL[0], Thread.currentThread().getContextClassLoader()));
    }
    SparkSession spark = builder.getOrCreate();
    application = spark;
    try {
      awaitExecutors(spark, Duration.ofSeconds(120));
    } catch (RuntimeException | InterruptedException e) {
      spark.stop();
      throw e;
    }
    return spark;
  }

  /** Waits until {@code spark} has an executor on each Worker; fails quoting the Workers' logs and the executors'. */
  private void awaitExecutors(SparkSession spark, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    // The driver counts itself among the executors it knows.
    while (spark.sparkContext().getExecutorMemoryStatus().size() < workers.size() + 1) {
      if (System.nanoTime() > deadline) {
        StringBuilder logs = new StringBuilder();
        for (int i = 0; i < workers.size(); i++) {
          logs.append("\n").append(workers.get(i).describe());
          newestExecutorLog(i).ifPresent(log -> logs.append("\n").append(log));
        }
        throw new IllegalStateException("The application's " + workers.size() + " executors did not register within "
            + within.toSeconds() + " s; the Workers, and each one's newest executor:" + logs);
      }
      Thread.sleep(100);
    }
  }

  /** The executors' JVMs, which the Workers started. */
  public List<ProcessHandle> executorProcesses() {
    return workers.stream().flatMap(w -> w.handle().descendants()).filter(ProcessHandle::isAlive)
        .filter(p -> commandLine(p).contains("CoarseGrainedExecutorBackend")).toList();
  }

  /** Each Worker's local directory, under which its executors' block managers keep their files. */
  public List<Path> workerLocalDirs() {
    List<Path> dirs = new ArrayList<>();
    for (int i = 0; i < workers.size(); i++) {
      dirs.add(workerDir(i).resolve("local"));
    }
    return dirs;
  }

  /** The stderr of the executor Worker {@code i} started last ({@code work/APP/N/stderr}), with its last lines. */
  private java.util.Optional<String> newestExecutorLog(int i) {
    try (var files = Files.find(workerDir(i).resolve("work"), 3, (f, a) -> f.getFileName().toString().equals("stderr"))) {
      return files.max(java.util.Comparator.comparing(f -> f.toFile().lastModified()))
          .map(f -> "its executor's log " + DaemonJvm.tail(f));
    } catch (IOException e) {
      return java.util.Optional.empty();
    }
  }

  /** Every executor's log so far ({@code work/APP/N/stderr} of each Worker), one after another. */
  public String executorLogs() throws IOException {
    StringBuilder all = new StringBuilder();
    for (int i = 0; i < workers.size(); i++) {
      try (var files = Files.find(workerDir(i).resolve("work"), 3, (f, a) -> f.getFileName().toString().equals("stderr"))) {
        for (Path f : files.toList()) {
          all.append(Files.readString(f, StandardCharsets.UTF_8));
        }
      }
    }
    return all.toString();
  }

  private Path workerDir(int i) {
    return dir.resolve("worker-" + i);
  }

  /** A process's command line, from /proc: {@code ProcessHandle.Info} leaves out a long one. */
  static String commandLine(ProcessHandle p) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", String.valueOf(p.pid()), "cmdline")), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public void close() {
    try {
      SparkSession spark = application;
      if (spark != null) {
        spark.stop();
      }
    } finally {
      stop(master, workers);
      forgetShutdownHook(killer);
    }
  }

  private static void forgetShutdownHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // closed while the JVM shuts down: the hook runs, and finds the daemons gone
    }
  }

  /** The Workers together (each takes its executors with it), then the Master. */
  private static void stop(DaemonJvm master, List<DaemonJvm> workers) {
    List<Thread> stopping = new ArrayList<>();
    for (DaemonJvm w : workers) {
      Thread t = new Thread(() -> w.stop(STOP_GRACE), "stop " + w);
      t.start();
      stopping.add(t);
    }
    for (Thread t : stopping) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        workers.forEach(DaemonJvm::kill);
      }
    }
    if (master != null) {
      master.stop(STOP_GRACE);
    }
  }

  /** The daemons' logging: Spark's warnings, and what the deploy classes say of the cluster (the lines awaited above). */
  private static Path writeLog4jConfig(Path file) throws IOException {
    return Files.writeString(file, String.join("\n",
        "rootLogger.level = warn",
        "rootLogger.appenderRef.stderr.ref = console",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex",
        "logger.deploy.name = org.apache.spark.deploy",
        "logger.deploy.level = info",
        ""));
  }

  /** The shared settings, as the daemons' {@code --properties-file}: in a file, so that no secret shows in {@code ps}. */
  private static Path writeProperties(Path file, Map<String, String> conf) throws IOException {
    Properties p = new Properties();
    p.putAll(conf);
    Files.deleteIfExists(file);
    Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      p.store(w, "settings a standalone cluster's daemons and applications share");
    }
    return file;
  }

  private static String scalaBinaryVersion() {
    String v = scala.util.Properties.versionNumberString();
    return v.substring(0, v.lastIndexOf('.'));
  }
}
