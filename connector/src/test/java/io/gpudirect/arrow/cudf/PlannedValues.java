package io.gpudirect.arrow.cudf;

import io.gpudirect.arrow.FileFooter;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Column;
import io.gpudirect.arrow.cudf.CudfBatchPlan.Slice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the GPU would hold, read on the host from a {@link CudfReadPlan}: each column's values
 * taken from exactly the slices of the body and of the staged bytes that the GPU wraps as
 * cuDF columns, in {@link ReferenceValues}' shape. Lets CI check the plan value for value
 * against Arrow Java without a GPU; the gpu-tagged test checks the real columns the same way.
 */
final class PlannedValues {
  private final SeekableByteChannel channel;
  private final Map<Long, List<Object>> dictionaries = new HashMap<>();

  private PlannedValues(SeekableByteChannel channel) {
    this.channel = channel;
  }

  /** Rows of all record batches, each row the selected columns' values. */
  static List<List<Object>> rows(CudfReadPlan plan, SeekableByteChannel channel) throws IOException {
    return new PlannedValues(channel).rows(plan);
  }

  private List<List<Object>> rows(CudfReadPlan plan) throws IOException {
    List<List<Object>> rows = new ArrayList<>();
    for (CudfReadPlan.Step step : plan.steps()) {
      Batch batch = new Batch(step);
      if (step.isDictionary()) {
        Column values = step.plan().columns().get(0);
        List<Object> all = new ArrayList<>();
        for (long r = 0; r < values.rows(); r++) {
          all.add(value(values, r, batch));
        }
        dictionaries.put(step.dictionaryId(), all);
        continue;
      }
      for (long r = 0; r < step.plan().rows(); r++) {
        List<Object> row = new ArrayList<>();
        for (Column c : step.plan().columns()) {
          row.add(value(c, r, batch));
        }
        rows.add(row);
      }
    }
    return rows;
  }

  /** One batch's stored body (read once) and staged bytes. */
  private final class Batch {
    final CudfBatchPlan plan;
    final ByteBuffer body;

    Batch(CudfReadPlan.Step step) throws IOException {
      plan = step.plan();
      body = FileFooter.readAt(channel, step.block().getOffset() + step.block().getMetadataLength(),
          (int) step.block().getBodyLength(), "test");
    }

    byte[] bytes(Slice s, long from, int length) {
      if (from < 0 || from + length > s.length()) {
        throw new AssertionError("a read of " + length + " bytes at " + from + " outside the planned slice " + s);
      }
      byte[] out = new byte[length];
      if (s.staged()) {
        System.arraycopy(plan.staged(), (int) (s.offset() + from), out, 0, length);
      } else {
        body.duplicate().position((int) (s.offset() + from)).get(out);
      }
      return out;
    }

    boolean bit(Slice s, long i) {
      return (bytes(s, i >>> 3, 1)[0] & (1 << (i & 7))) != 0;
    }

    int offset(Slice s, long i) {
      return ByteBuffer.wrap(bytes(s, i * 4, 4)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }
  }

  private Object value(Column c, long r, Batch batch) {
    if (c.validity() != null && !batch.bit(c.validity(), r)) {
      return null;
    }
    switch (c.kind()) {
      case NULL:
        return null;
      case BOOL:
        return batch.bit(c.data(), r);
      case STRING:
        int from = batch.offset(c.offsets(), r);
        return new String(batch.bytes(c.data(), from, batch.offset(c.offsets(), r + 1) - from), StandardCharsets.UTF_8);
      case LIST: {
        List<Object> values = new ArrayList<>();
        Column child = c.children().get(0);
        for (long j = batch.offset(c.offsets(), r); j < batch.offset(c.offsets(), r + 1); j++) {
          // A binary's bytes are a UINT8 child: one hex each, as ReferenceValues gives them.
          values.add(value(child, j, batch));
        }
        return values;
      }
      case STRUCT: {
        List<Object> values = new ArrayList<>();
        for (Column child : c.children()) {
          values.add(value(child, r, batch));
        }
        return values;
      }
      case DICTIONARY: {
        int width = c.type().getSizeInBytes();
        byte[] raw = Arrays.copyOf(batch.bytes(c.data(), r * width, width), 8);
        long index = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).getLong();
        return dictionaries.get(c.dictionaryId()).get((int) index);
      }
      default: {
        int width = c.type().getSizeInBytes();
        return ReferenceValues.hex(batch.bytes(c.data(), r * width, width));
      }
    }
  }
}
