package io.gpudirect.spark;

import java.util.Arrays;
import java.util.StringJoiner;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.util.Utils;

/**
 * The scan's metrics in the SQL tab of the Spark UI. Spark creates each metric class on the
 * driver by name to aggregate task values, so each has a public no-argument constructor.
 */
final class ScanMetrics {
  static final String BYTES_FETCHED = "bytesFetched";
  static final String FETCH_TIME = "fetchTime";
  static final String TRANSPORT = "transport";
  static final String ROW_GROUPS_SKIPPED = "rowGroupsSkipped";
  static final String ROW_GROUPS_PLANNED = "rowGroupsPlanned";
  static final String FILES_READ = "filesRead";
  static final String FILES_PRUNED = "filesPruned";
  static final String FETCH_THROUGHPUT = "fetchThroughput";

  /** Bit flags of the transports that ran; a scan over several servers may use more than one. */
  static final long TCP = 1;
  static final long RDMA = 2;
  /** UCX, named by what carried the bytes: verbs is RDMA, TCP is not, and is never called that. */
  static final long UCX_VERBS = 4;
  static final long UCX_TCP = 8;
  static final long UCX_OTHER = 16;

  private ScanMetrics() {}

  static CustomMetric[] all() {
    return new CustomMetric[] {
        new BytesFetched(), new FetchTime(), new FetchThroughput(), new Transport(), new RowGroupsSkipped(),
        new RowGroupsPlanned(), new FilesRead(), new FilesPruned()};
  }

  static CustomTaskMetric value(String name, long value) {
    return new CustomTaskMetric() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public long value() {
        return value;
      }
    };
  }

  static long transportFlag(String transport) {
    return switch (transport) {
      case "rdma" -> RDMA;
      case "ucx:verbs" -> UCX_VERBS;
      case "ucx:tcp" -> UCX_TCP;
      default -> transport.startsWith("ucx") ? UCX_OTHER : TCP;
    };
  }

  public static final class BytesFetched implements CustomMetric {
    @Override
    public String name() {
      return BYTES_FETCHED;
    }

    @Override
    public String description() {
      return "bytes fetched";
    }

    @Override
    public String aggregateTaskMetrics(long[] values) {
      return Utils.bytesToString(Arrays.stream(values).sum());
    }
  }

  public static final class FetchTime implements CustomMetric {
    @Override
    public String name() {
      return FETCH_TIME;
    }

    @Override
    public String description() {
      return "fetch wait time";
    }

    @Override
    public String aggregateTaskMetrics(long[] values) {
      return Utils.msDurationToString(Arrays.stream(values).sum() / 1_000_000L);
    }
  }

  /**
   * Each task reports the bytes per second its own fetches ran at (bytes over the time it
   * waited for them); the SQL tab shows their median and range over the tasks.
   */
  public static final class FetchThroughput implements CustomMetric {
    @Override
    public String name() {
      return FETCH_THROUGHPUT;
    }

    @Override
    public String description() {
      return "fetch throughput per task";
    }

    @Override
    public String aggregateTaskMetrics(long[] values) {
      long[] fetched = Arrays.stream(values).filter(v -> v > 0).sorted().toArray();
      if (fetched.length == 0) {
        return "none";
      }
      return Utils.bytesToString(fetched[fetched.length / 2]) + "/s (median; " + Utils.bytesToString(fetched[0])
          + "/s to " + Utils.bytesToString(fetched[fetched.length - 1]) + "/s)";
    }
  }

  public static final class Transport implements CustomMetric {
    @Override
    public String name() {
      return TRANSPORT;
    }

    @Override
    public String description() {
      return "transport";
    }

    @Override
    public String aggregateTaskMetrics(long[] values) {
      long flags = Arrays.stream(values).reduce(0, (a, b) -> a | b);
      StringJoiner names = new StringJoiner("+");
      if ((flags & TCP) != 0) {
        names.add("tcp");
      }
      if ((flags & RDMA) != 0) {
        names.add("rdma");
      }
      if ((flags & UCX_VERBS) != 0) {
        names.add("ucx:verbs");
      }
      if ((flags & UCX_TCP) != 0) {
        names.add("ucx:tcp");
      }
      if ((flags & UCX_OTHER) != 0) {
        names.add("ucx (verbs or tcp)");
      }
      return flags == 0 ? "none" : names.toString();
    }
  }

  /** A count the driver reports once per scan; Spark instantiates each subclass by name. */
  abstract static class DriverCount implements CustomMetric {
    @Override
    public String aggregateTaskMetrics(long[] values) {
      return String.valueOf(Arrays.stream(values).sum());
    }
  }

  public static final class RowGroupsSkipped extends DriverCount {
    @Override
    public String name() {
      return ROW_GROUPS_SKIPPED;
    }

    @Override
    public String description() {
      return "row groups skipped by statistics";
    }
  }

  public static final class RowGroupsPlanned extends DriverCount {
    @Override
    public String name() {
      return ROW_GROUPS_PLANNED;
    }

    @Override
    public String description() {
      return "row groups in files";
    }
  }

  public static final class FilesRead extends DriverCount {
    @Override
    public String name() {
      return FILES_READ;
    }

    @Override
    public String description() {
      return "files read";
    }
  }

  public static final class FilesPruned extends DriverCount {
    @Override
    public String name() {
      return FILES_PRUNED;
    }

    @Override
    public String description() {
      return "files left out by partition filters";
    }
  }
}
