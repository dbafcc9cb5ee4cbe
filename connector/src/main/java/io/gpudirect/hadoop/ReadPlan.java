package io.gpudirect.hadoop;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * The byte ranges of one file that a reader is about to read, in file order: for a Parquet
 * slice, the column chunks of the requested columns in its row groups. It travels to the
 * stream through the Hadoop conf of the reader ({@link #CONF_KEY}), because Parquet opens the
 * file itself and the gpudirect file system is never cached, so each reader's conf reaches
 * the stream it opens. A stream of another file ignores it.
 *
 * @param uri the file, as the file system qualifies it
 * @param ranges offset and length pairs, sorted, not overlapping
 */
public record ReadPlan(String uri, long[] ranges) {
  /** Conf key of the plan of the file a reader opens next. */
  public static final String CONF_KEY = "gpudirect.internal.readPlan";

  public ReadPlan {
    if (ranges.length % 2 != 0) {
      throw new IllegalArgumentException("A read plan needs offset and length pairs, got " + ranges.length + " numbers");
    }
    long end = 0;
    for (int i = 0; i < ranges.length; i += 2) {
      if (ranges[i] < end || ranges[i + 1] <= 0) {
        throw new IllegalArgumentException("Read plan of " + uri + ": range " + ranges[i] + "+" + ranges[i + 1]
            + " is empty or not after the previous one");
      }
      end = ranges[i] + ranges[i + 1];
    }
  }

  /** A plan of ranges that may touch each other; touching ranges are merged into one. */
  public static ReadPlan of(String uri, List<long[]> offsetAndLength) {
    List<Long> merged = new ArrayList<>();
    for (long[] r : offsetAndLength) {
      int n = merged.size();
      if (n > 0 && merged.get(n - 2) + merged.get(n - 1) == r[0]) {
        merged.set(n - 1, merged.get(n - 1) + r[1]);
      } else {
        merged.add(r[0]);
        merged.add(r[1]);
      }
    }
    return new ReadPlan(uri, merged.stream().mapToLong(Long::longValue).toArray());
  }

  public int size() {
    return ranges.length / 2;
  }

  public long offset(int i) {
    return ranges[2 * i];
  }

  public long end(int i) {
    return ranges[2 * i] + ranges[2 * i + 1];
  }

  /** The index of the range holding {@code position}, or -1. */
  public int rangeContaining(long position) {
    int lo = 0;
    int hi = size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (end(mid) <= position) {
        lo = mid + 1;
      } else if (offset(mid) > position) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  public long bytes() {
    long sum = 0;
    for (int i = 1; i < ranges.length; i += 2) {
      sum += ranges[i];
    }
    return sum;
  }

  /** Puts this plan into {@code conf}, replacing any other: the numbers, then ';' and the URI. */
  public void set(Configuration conf) {
    StringBuilder sb = new StringBuilder();
    for (long v : ranges) {
      sb.append(sb.length() == 0 ? "" : ",").append(v);
    }
    conf.set(CONF_KEY, sb.append(';').append(uri).toString());
  }

  /** The plan in {@code conf}, or null. */
  static ReadPlan get(Configuration conf) {
    String v = conf.get(CONF_KEY);
    if (v == null || v.indexOf(';') < 0) {
      return null;
    }
    int split = v.indexOf(';');
    String numbers = v.substring(0, split);
    long[] ranges = numbers.isEmpty() ? new long[0]
        : java.util.Arrays.stream(numbers.split(",")).mapToLong(Long::parseLong).toArray();
    return new ReadPlan(v.substring(split + 1), ranges);
  }
}
