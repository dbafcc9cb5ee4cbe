package io.gpudirect.spark;

import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a GPU engine's plan rule ({@code io.gpudirect.spark.rapids}) may ask of and do to this
 * source's scans, which are otherwise private to this package.
 */
public final class DeviceScans {
  private static final Logger LOG = LoggerFactory.getLogger(DeviceScans.class);
  private static final Set<String> SAID = ConcurrentHashMap.newKeySet();
  private static final List<DeviceEngine> ENGINES = ServiceLoader
      .load(DeviceEngine.class, DeviceEngine.class.getClassLoader()).stream().map(ServiceLoader.Provider::get).toList();

  private DeviceScans() {}

  /** What explain() notes about the GPU engines' set-up in a session with {@code conf}; empty when nothing. */
  static String setupNote(SparkConf conf) {
    return ENGINES.stream().map(e -> e.setupNote(conf)).collect(Collectors.joining());
  }

  /** Whether {@code scan} is a scan of this source. */
  public static boolean isGpuDirect(Scan scan) {
    return scan instanceof GpuDirectScan;
  }

  /** Whether {@code node} of a logical plan is a relation of this source's table. */
  public static boolean isGpuDirectRelation(LogicalPlan node) {
    return node instanceof DataSourceV2Relation r && r.table() instanceof GpuDirectTable;
  }

  /** Whether {@code scan} already hands device batches over ({@link #handingOff}). */
  public static boolean isHandingOff(Scan scan) {
    return scan instanceof DeviceScan;
  }

  /** Whether the scan's options let its batches live on the GPU: output=auto or output=gpu. */
  public static boolean mayHandOff(Scan scan) {
    return ((GpuDirectScan) scan).output() != Output.HOST;
  }

  /**
   * Whether the scan reads a partition column: its values come from directory names as host
   * constants, which the engine's own copy takes (the hand-off takes device columns only).
   */
  public static boolean readsPartitionColumns(Scan scan) {
    return ((GpuDirectScan) scan).readsPartitionColumns();
  }

  /** {@code scan} (of this source) reading device batches in the form {@code handoff} makes. */
  public static Scan handingOff(Scan scan, DeviceHandoff handoff) {
    return new DeviceScan((GpuDirectScan) scan, handoff);
  }

  /**
   * Adds {@code note} to what explain() shows of {@code scan}, and says it in the log once per
   * JVM: why batches take the engine's copy rather than going over as they are.
   */
  public static void note(Scan scan, String note) {
    ((GpuDirectScan) scan).note(note);
    if (SAID.add(note)) {
      LOG.warn("gpudirect: {}", note);
    }
  }
}
