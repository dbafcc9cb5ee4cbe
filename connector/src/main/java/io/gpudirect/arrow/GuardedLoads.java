package io.gpudirect.arrow;

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

  static void recordBatch(ArrowReader reader, BoundedCodecs codecs, ArrowRecordBatch batch,
      Consumer<ArrowRecordBatch> load, String displayName) {
    LoadedBatchCheck.beforeLoad(batch, "a record batch", displayName);
    codecs.startLoad();
    try {
      load.accept(batch);
    } catch (RuntimeException e) {
      try {
        reader.getVectorSchemaRoot().clear();
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      codecs.releaseUntaken();
      throw e;
    }
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
  static void dictionary(Map<Long, Dictionary> dictionaries, BoundedCodecs codecs, ArrowDictionaryBatch batch,
      Consumer<ArrowDictionaryBatch> load, String displayName) {
    String what = "dictionary " + batch.getDictionaryId();
    Dictionary dictionary = dictionaries.get(batch.getDictionaryId());
    if (dictionary == null) {
      batch.close();
      throw new ArrowFormatException(displayName, what + " is not declared by any column of the schema");
    }
    LoadedBatchCheck.beforeLoad(batch.getDictionary(), what, displayName);
    codecs.startLoad();
    try {
      load.accept(batch);
    } catch (RuntimeException e) {
      dictionary.getVector().clear();
      codecs.releaseUntaken();
      throw e;
    }
    LoadedBatchCheck.validate(dictionary.getVector(), what, displayName);
  }
}
