package io.gpudirect.spark.rapids;

import io.gpudirect.spark.DeviceScans;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.JavaConverters;

/**
 * Runs after the RAPIDS Accelerator's transitions. Where the plugin put its host-to-GPU
 * transition ({@code HostColumnarToGpu}; {@code GpuRowToColumnarExec} over a row scan, or
 * over a ColumnarToRowExec of a scan with nested types) directly over a gpudirect scan, the pair becomes one scan whose batches are the plugin's own
 * GPU column vectors over the cuDF tables gpudirect decoded ({@link RapidsHandoff}), under the
 * plugin's coalescing to the transition's goal, so the batches the next operator sees are
 * sized as before. Nothing is copied to the host on the way.
 *
 * <p>Left alone: plans without the plugin's transitions (no plugin, or the plugin off), scans
 * with {@code output=host}, read schemas whose layout differs from the plugin's
 * ({@link #layoutRefusal}), and plugin versions outside {@link RapidsPlugin#TESTED_LINE}; all
 * but the first say why in explain() and, once, in the log.
 */
final class PassThroughRule extends Rule<SparkPlan> {
  private static final Logger LOG = LoggerFactory.getLogger(PassThroughRule.class);
  private static final AtomicBoolean ANNOUNCED = new AtomicBoolean();
  private static final String COALESCE = "com.nvidia.spark.rapids.GpuCoalesceBatches";
  private static final String COALESCE_GOAL = "com.nvidia.spark.rapids.CoalesceGoal";

  private final SparkSession session;

  PassThroughRule(SparkSession session) {
    this.session = session;
  }

  @Override
  public SparkPlan apply(SparkPlan plan) {
    return rewrite(plan);
  }

  private SparkPlan rewrite(SparkPlan node) {
    BatchScanExec scan = isTransition(node) ? gpuDirectScanUnder(node.children().head()) : null;
    if (scan != null) {
      return passThrough(node, scan);
    }
    List<SparkPlan> children = new ArrayList<>();
    boolean changed = false;
    for (SparkPlan child : JavaConverters.seqAsJavaList(node.children())) {
      SparkPlan c = rewrite(child);
      changed |= c != child;
      children.add(c);
    }
    return changed ? node.withNewChildren(JavaConverters.asScalaBuffer(children).toSeq()) : node;
  }

  /**
   * Why gpudirect's device columns of {@code schema} are not yet in the plugin's layout, or
   * null when they are: the plugin holds binary as LIST of bytes and decimals in the narrowest
   * width, which the hand-off ({@code HandoffReader}) makes of top-level columns only.
   */
  static String layoutRefusal(StructType schema) {
    for (StructField f : schema.fields()) {
      if (!(f.dataType() instanceof BinaryType) && contains(f.dataType(), BinaryType.class)) {
        return "column '" + f.name() + "' holds nested binary, which is not yet handed over on the device";
      }
      if (!(f.dataType() instanceof DecimalType) && contains(f.dataType(), DecimalType.class)) {
        return "column '" + f.name() + "' holds nested decimals, which are not yet handed over on the device";
      }
    }
    return null;
  }

  private static boolean contains(DataType t, Class<? extends DataType> kind) {
    if (kind.isInstance(t)) {
      return true;
    }
    if (t instanceof StructType s) {
      for (StructField f : s.fields()) {
        if (contains(f.dataType(), kind)) {
          return true;
        }
      }
    } else if (t instanceof ArrayType a) {
      return contains(a.elementType(), kind);
    } else if (t instanceof MapType m) {
      return contains(m.keyType(), kind) || contains(m.valueType(), kind);
    }
    return false;
  }

  /**
   * Our scan directly under a transition, or under the ColumnarToRowExec the plugin puts
   * between them for nested types ({@code GpuRowToColumnarExec(ColumnarToRowExec(scan))}).
   */
  private static BatchScanExec gpuDirectScanUnder(SparkPlan child) {
    SparkPlan c = child instanceof ColumnarToRowExec rows ? rows.child() : child;
    return c instanceof BatchScanExec b && (DeviceScans.isGpuDirect(b.scan()) || DeviceScans.isHandingOff(b.scan()))
        ? b : null;
  }

  /** By name: the plugin's classes are not on this class's class path at compile time. */
  static boolean isTransition(SparkPlan node) {
    String name = node.getClass().getName();
    return name.equals(RapidsPlugin.HOST_TO_GPU) || name.equals(RapidsPlugin.ROW_TO_GPU);
  }

  private SparkPlan passThrough(SparkPlan transition, BatchScanExec scan) {
    Scan ours = scan.scan();
    if (DeviceScans.isHandingOff(ours)) {
      // A plan this rule has seen before, planned again: its batches are on the device already,
      // and the plugin's copy would read them through host getters.
      return scan;
    }
    if (!DeviceScans.mayHandOff(ours)) {
      DeviceScans.note(ours, "output=host: batches take the RAPIDS Accelerator's host-to-GPU copy");
      return transition;
    }
    if (DeviceScans.readsPartitionColumns(ours)) {
      DeviceScans.note(ours, "partition columns from directory names: batches take the RAPIDS Accelerator's"
          + " host-to-GPU copy");
      return transition;
    }
    String layout = layoutRefusal(ours.readSchema());
    if (layout != null) {
      DeviceScans.note(ours, layout + ": batches take the RAPIDS Accelerator's host-to-GPU copy");
      return transition;
    }
    String version = RapidsPlugin.version().orElse("unknown");
    if (!RapidsPlugin.tested(version)) {
      DeviceScans.note(ours, "RAPIDS Accelerator " + version + " is not a version gpudirect's device"
          + " pass-through was tested with (" + RapidsPlugin.TESTED_LINE + "x): batches take the plugin's"
          + " host-to-GPU copy");
      return transition;
    }
    Object goal;
    Constructor<?> coalesce;
    long target;
    try {
      goal = transition.getClass().getMethod("goal").invoke(transition);
      coalesce = RapidsPlugin.sqlClass(COALESCE).getConstructor(SparkPlan.class, RapidsPlugin.sqlClass(COALESCE_GOAL));
      target = RapidsHandoff.targetBatchBytes(session);
    } catch (ReflectiveOperationException | RuntimeException e) {
      DeviceScans.note(ours, "the RAPIDS Accelerator " + version + " lacks what gpudirect's device pass-through"
          + " uses (" + e + "): batches take the plugin's host-to-GPU copy");
      return transition;
    }
    BatchScanExec device = scan.copy(scan.output(), DeviceScans.handingOff(ours, new RapidsHandoff(target)),
        scan.runtimeFilters(), scan.ordering(), scan.table(), scan.spjParams());
    try {
      SparkPlan coalesced = (SparkPlan) coalesce.newInstance(device, goal);
      if (ANNOUNCED.compareAndSet(false, true)) {
        LOG.info("gpudirect: scans hand device batches to the RAPIDS Accelerator {} (target {} bytes)", version, target);
      }
      return coalesced;
    } catch (ReflectiveOperationException | RuntimeException e) {
      DeviceScans.note(ours, "cannot coalesce device batches with the RAPIDS Accelerator " + version + " ("
          + e + "): batches take the plugin's host-to-GPU copy");
      return transition;
    }
  }
}
