package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.hadoop.FileSystemConf;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.spark.plan.ArrowPlanner;
import io.gpudirect.spark.plan.DirectoryPartitioning;
import io.gpudirect.spark.plan.ParquetPlanner;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;
import scala.reflect.ClassTag$;

/**
 * What the driver knows about one read: the session, the resolved options, the listed files
 * and the Hadoop conf their readers use. Never sent to executors.
 */
final class ScanContext {
  final SparkSession session;
  final ResolvedOptions options;
  /** What executors get of the options: parsed here, so a misspelt value fails the query now. */
  final ReadSpec spec;
  final List<DataFile> files;
  /** The partition columns the files' directories give; {@link DirectoryPartitioning#NONE} where none. */
  final DirectoryPartitioning partitioning;
  final Configuration hadoopConf;
  final boolean arrow;
  private ParquetPlanner parquet;
  private Broadcast<SerializableConfiguration> broadcastConf;

  ScanContext(SparkSession session, ResolvedOptions options, CaseInsensitiveStringMap readOptions, List<DataFile> files,
      DirectoryPartitioning partitioning) {
    this.session = session;
    this.options = options;
    this.files = files;
    this.partitioning = partitioning;
    this.arrow = files.get(0).format().isArrow();
    for (DataFile f : files) {
      if (f.format().isArrow() != arrow) {
        throw new GpuDirectException("Cannot read Parquet and Arrow files in one scan: " + files.get(0).uri()
            + " and " + f.uri() + ". Set option format, or load them separately");
      }
    }
    this.spec = ReadSpec.of(options);
    this.hadoopConf = hadoopConf(session, options, readOptions);
  }

  /**
   * Spark's Hadoop conf for this session and read, with the gpudirect:// file system and the
   * resolved client settings, so executors connect exactly as the driver did. Read options
   * that are gpudirect options are not copied under their own names: the conf carries them,
   * the secret among them, only as {@link FileSystemConf} writes them.
   */
  private static Configuration hadoopConf(SparkSession session, ResolvedOptions options,
      CaseInsensitiveStringMap readOptions) {
    // As Spark's file sources do: read options also reach Hadoop (e.g. parquet.* settings).
    Configuration conf = session.sessionState().newHadoopConf();
    readOptions.asCaseSensitiveMap().forEach((k, v) -> {
      if (v != null && !isGpuDirectKey(k)) {
        conf.set(k, v);
      }
    });
    return FileSystemConf.set(conf, options);
  }

  /** A gpudirect option, by its read-option key or its session key (which, as a read option, is ignored). */
  private static boolean isGpuDirectKey(String key) {
    String k = key.toLowerCase(java.util.Locale.ROOT);
    return GpuDirectOption.forKey(k) != null || k.startsWith(GpuDirectOption.SESSION_PREFIX);
  }

  /**
   * {@link #hadoopConf} as executors get it: broadcast once for every scan of this read, not
   * once per scan. Serializing a Hadoop conf of a thousand keys costs milliseconds, and Spark
   * asks for a reader factory on every copy of the scan's plan node. Kept as long as the
   * table is, which keeps Spark's cleaner from removing it.
   */
  synchronized Broadcast<SerializableConfiguration> broadcastConf() {
    if (broadcastConf == null) {
      broadcastConf = session.sparkContext().broadcast(new SerializableConfiguration(hadoopConf),
          ClassTag$.MODULE$.apply(SerializableConfiguration.class));
    }
    return broadcastConf;
  }

  ParquetPlanner parquet() {
    if (parquet == null) {
      parquet = new ParquetPlanner(hadoopConf, session.sessionState().conf());
    }
    return parquet;
  }

  boolean caseSensitive() {
    return session.sessionState().conf().caseSensitiveAnalysis();
  }

  /** The schema of the files' own columns, from the first file's footer. */
  StructType inferSchema() {
    DataFile first = files.get(0);
    return arrow ? ArrowPlanner.schema(first, options) : parquet().inferSchema(first);
  }

  /** Which transport reads from the first server, and why: for explain() and the log. */
  String transportDescription() {
    var store = RemoteStores.get(files.get(0).uri(), options);
    return store.transport() + " (" + store.transportReason() + ")";
  }

  String locationsDescription() {
    return files.stream().map(f -> f.uri().authority()).distinct().collect(Collectors.joining(","));
  }
}
