package io.gpudirect.spark.arrow;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * {@link LoadedBatchCheck} around Arrow's own loading of a batch or a dictionary, shared by
 * the file and stream readers (which extend different Arrow classes, so they cannot share a
 * base class). Each passes its {@code super} load as {@code load}.
 */
final class GuardedLoads {
  private GuardedLoads() {}

  static void recordBatch(ArrowReader reader, ArrowRecordBatch batch, Consumer<ArrowRecordBatch> load,
      String displayName) {
    LoadedBatchCheck.beforeLoad(batch, "a record batch", displayName);
    load.accept(batch);
    try {
      LoadedBatchCheck.afterLoad(reader.getVectorSchemaRoot(), reader, "a record batch", displayName);
    } catch (IOException e) {
      throw new ArrowFormatException(displayName, "cannot read its schema", e);
    }
  }

  /**
   * @param dictionaries the reader's protected map, not {@code lookup()}: the file reader loads
   *     dictionaries while it initializes, when {@code lookup()} refuses to answer
   */
  static void dictionary(Map<Long, Dictionary> dictionaries, ArrowDictionaryBatch batch,
      Consumer<ArrowDictionaryBatch> load, String displayName) {
    String what = "dictionary " + batch.getDictionaryId();
    Dictionary dictionary = dictionaries.get(batch.getDictionaryId());
    if (dictionary == null) {
      batch.close();
      throw new ArrowFormatException(displayName, what + " is not declared by any column of the schema");
    }
    LoadedBatchCheck.beforeLoad(batch.getDictionary(), what, displayName);
    load.accept(batch);
    LoadedBatchCheck.validate(dictionary.getVector(), what, displayName);
  }
}
