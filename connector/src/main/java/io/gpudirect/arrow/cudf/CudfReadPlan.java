package io.gpudirect.arrow.cudf;

import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.arrow.Failures;
import io.gpudirect.arrow.FileFooter;
import io.gpudirect.arrow.StreamLayout;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowFooter;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Everything the cuDF path does on the host before the GPU sees a byte: the selected columns'
 * types, and every dictionary and record batch of the file or stream checked (and, when
 * compressed, decompressed) by {@link CudfBatchPlanner}, in the order the GPU will make them.
 * A malformed or unsupported input fails here, naming the file.
 *
 * @param fields the selected top-level fields, in the order asked for
 * @param steps dictionary batches (of the selected columns' dictionaries) and record batches,
 *     in file order: a dictionary step applies to the record steps after it
 */
record CudfReadPlan(List<Field> fields, List<Step> steps) {
  /**
   * One batch to make on the GPU.
   *
   * @param dictionaryId the id the batch defines, or -1 for a record batch
   */
  record Step(CudfBatchPlan plan, ArrowBlock block, long dictionaryId, String where) {
    boolean isDictionary() {
      return dictionaryId >= 0;
    }
  }

  /** Plans reading {@code columns} (all when none) of an Arrow IPC file or stream. */
  static CudfReadPlan of(SeekableByteChannel channel, long size, String displayName, boolean stream,
      String... columns) {
    return of(channel, size, displayName, stream, 0, Integer.MAX_VALUE, columns);
  }

  /**
   * Plans reading record batches [firstBatch, firstBatch + batchCount) of {@code columns}, and
   * the dictionaries that come before the last of them. Only those batches' metadata is
   * checked (and, compressed, decompressed): a file cut into Spark slices is planned once in
   * all, each slice taking its own batches, not once per slice.
   */
  static CudfReadPlan of(SeekableByteChannel channel, long size, String displayName, boolean stream,
      int firstBatch, int batchCount, String... columns) {
    try {
      return plan(channel, size, displayName, stream, firstBatch, (long) firstBatch + batchCount, columns);
    } catch (IOException e) {
      throw new ArrowFormatException(displayName, "cannot read it: " + e.getMessage(), e);
    } catch (RuntimeException | StackOverflowError e) {
      throw Failures.named(displayName, "its metadata is malformed", e);
    }
  }

  private static CudfReadPlan plan(SeekableByteChannel channel, long size, String displayName, boolean stream,
      int firstBatch, long endBatch, String[] columns) throws IOException {
    List<Field> fields;
    List<StreamLayout.Batch> order = new ArrayList<>();
    if (stream) {
      StreamLayout layout = StreamLayout.scan(channel, size, displayName);
      fields = layout.schema().getFields();
      order.addAll(layout.batches());
    } else {
      ArrowFooter footer = FileFooter.read(channel, size, displayName);
      fields = footer.getSchema().getFields();
      footer.getDictionaries().forEach(b -> order.add(new StreamLayout.Batch(b, true)));
      footer.getRecordBatches().forEach(b -> order.add(new StreamLayout.Batch(b, false)));
    }
    int[] selected = select(fields, columns, displayName);
    List<Field> chosen = new ArrayList<>();
    Map<Long, Field> encoded = new HashMap<>();
    for (int i : selected) {
      CudfTypeMapping.of(fields.get(i), displayName);
      chosen.add(fields.get(i));
      collectDictionaries(fields.get(i), encoded, displayName);
    }
    Set<Long> declared = new HashSet<>();
    fields.forEach(f -> declaredDictionaries(f, declared));

    Map<Long, Long> dictionarySizes = new HashMap<>();
    List<Step> steps = new ArrayList<>();
    int records = 0;
    int dictionaries = 0;
    for (StreamLayout.Batch batch : order) {
      ArrowBlock block = batch.block();
      if (records >= endBatch) {
        break; // Nothing after the slice's last batch can change it.
      }
      if (batch.dictionary()) {
        String where = "dictionary batch " + dictionaries++;
        Message message = FileFooter.readBlockMessage(channel, block, where, displayName);
        if (message.headerType() != MessageHeader.DictionaryBatch) {
          throw new ArrowFormatException(displayName, where + " is not a dictionary batch");
        }
        DictionaryBatch dictionary = (DictionaryBatch) message.header(new DictionaryBatch());
        long id = dictionary.id();
        if (!declared.contains(id)) {
          throw new ArrowFormatException(displayName, where + " defines dictionary " + id
              + ", which no column of the schema uses");
        }
        Field field = encoded.get(id);
        if (field == null) {
          continue; // A dictionary of columns not selected: never fetched.
        }
        if (dictionary.isDelta()) {
          throw new ArrowFormatException(displayName, where + " is a delta to dictionary " + id
              + " (of column '" + field.getName() + "'), which is not read into cuDF yet");
        }
        CudfBatchPlan plan = CudfBatchPlanner.plan(channel, block, dictionary.data(),
            List.of(CudfTypeMapping.dictionaryValues(field)), new int[] {0}, Map.of(), where, displayName);
        dictionarySizes.put(id, plan.rows());
        steps.add(new Step(plan, block, id, where));
      } else if (records < firstBatch) {
        records++; // Another slice's batch: that slice checks it.
      } else {
        String where = "record batch " + records++;
        Message message = FileFooter.readBlockMessage(channel, block, where, displayName);
        if (message.headerType() != MessageHeader.RecordBatch) {
          throw new ArrowFormatException(displayName, where + " is not a record batch");
        }
        RecordBatch header = (RecordBatch) message.header(new RecordBatch());
        CudfBatchPlan plan = CudfBatchPlanner.plan(channel, block, header, fields, selected,
            Map.copyOf(dictionarySizes), where, displayName);
        steps.add(new Step(plan, block, -1, where));
      }
    }
    return new CudfReadPlan(chosen, steps);
  }

  private static int[] select(List<Field> fields, String[] columns, String displayName) {
    if (columns.length == 0) {
      int[] all = new int[fields.size()];
      for (int i = 0; i < all.length; i++) {
        all[i] = i;
      }
      return all;
    }
    int[] picked = new int[columns.length];
    for (int c = 0; c < columns.length; c++) {
      picked[c] = -1;
      for (int i = 0; i < fields.size() && picked[c] < 0; i++) {
        if (fields.get(i).getName().equals(columns[c])) {
          picked[c] = i;
        }
      }
      if (picked[c] < 0) {
        throw new ArrowFormatException(displayName, "it has no column '" + columns[c] + "'");
      }
    }
    return picked;
  }

  /** The dictionary-encoded fields at or below {@code field}, by dictionary id. */
  private static void collectDictionaries(Field field, Map<Long, Field> out, String displayName) {
    if (field.getDictionary() != null) {
      out.put(field.getDictionary().getId(), field);
      for (Field child : field.getChildren()) {
        if (hasDictionary(child)) {
          throw new ArrowFormatException(displayName, "column '" + field.getName()
              + "' is a dictionary whose values are dictionary-encoded again, which is not read into cuDF yet");
        }
      }
      return;
    }
    for (Field child : field.getChildren()) {
      collectDictionaries(child, out, displayName);
    }
  }

  private static boolean hasDictionary(Field field) {
    return field.getDictionary() != null || field.getChildren().stream().anyMatch(CudfReadPlan::hasDictionary);
  }

  private static void declaredDictionaries(Field field, Set<Long> out) {
    if (field.getDictionary() != null) {
      out.add(field.getDictionary().getId());
    }
    field.getChildren().forEach(c -> declaredDictionaries(c, out));
  }
}
