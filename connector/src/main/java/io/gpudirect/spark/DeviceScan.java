package io.gpudirect.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.StructType;

/**
 * A {@link GpuDirectScan} whose batches go to a GPU SQL engine in the engine's form: the same
 * partitions, metrics and plan, read by GPU decoders and handed over by {@link HandoffReader}.
 */
final class DeviceScan implements Scan, Batch {
  private final GpuDirectScan scan;
  private final DeviceHandoff handoff;

  DeviceScan(GpuDirectScan scan, DeviceHandoff handoff) {
    this.scan = scan;
    this.handoff = handoff;
  }

  @Override
  public StructType readSchema() {
    return scan.readSchema();
  }

  @Override
  public String description() {
    return scan.description() + " batches=device (handed to the RAPIDS Accelerator without a copy)";
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    return scan.partitions(true);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return ((GpuDirectReaderFactory) scan.createReaderFactory()).handingOff(handoff);
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return scan.supportedCustomMetrics();
  }

  @Override
  public CustomTaskMetric[] reportDriverMetrics() {
    return scan.reportDriverMetrics();
  }

  /** The same read handed over alike: so that Spark reuses what a plan holds twice, on the GPU too. */
  @Override
  public boolean equals(Object o) {
    return o instanceof DeviceScan other && scan.equals(other.scan) && handoff.equals(other.handoff);
  }

  @Override
  public int hashCode() {
    return 31 * scan.hashCode() + handoff.hashCode();
  }

  @Override
  public String toString() {
    return description();
  }
}
