package io.gpudirect.spark.arrow;

import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/** Arrow's file reader with {@link LoadedBatchCheck} around every batch and dictionary it loads. */
final class GuardedFileReader extends ArrowFileReader {
  private final String displayName;

  GuardedFileReader(SeekableByteChannel channel, BufferAllocator allocator, String displayName) {
    super(channel, allocator);
    this.displayName = displayName;
  }

  @Override
  protected void loadRecordBatch(ArrowRecordBatch batch) {
    LoadedBatchCheck.beforeLoad(batch, "a record batch", displayName);
    super.loadRecordBatch(batch);
    try {
      LoadedBatchCheck.afterLoad(getVectorSchemaRoot(), this, "a record batch", displayName);
    } catch (IOException e) {
      throw new ArrowFormatException(displayName, "cannot read its schema", e);
    }
  }

  @Override
  protected void loadDictionary(ArrowDictionaryBatch batch) {
    String what = "dictionary " + batch.getDictionaryId();
    // The protected map, not lookup(): the file reader loads dictionaries while it
    // initializes, when lookup() refuses to answer.
    Dictionary dictionary = dictionaries.get(batch.getDictionaryId());
    if (dictionary == null) {
      batch.close();
      throw new ArrowFormatException(displayName, what + " is not declared by any column of the schema");
    }
    LoadedBatchCheck.beforeLoad(batch.getDictionary(), what, displayName);
    super.loadDictionary(batch);
    LoadedBatchCheck.validate(dictionary.getVector(), what, displayName);
  }

}
