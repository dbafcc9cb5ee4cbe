package io.gpudirect.spark.arrow;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow's stream reader over a {@link BoundedMessageReader}, with {@link LoadedBatchCheck}
 * around every batch and dictionary it loads. It keeps the schema as written (Arrow's root
 * holds dictionary-encoded columns as their index type).
 */
final class GuardedStreamReader extends ArrowStreamReader {
  private final String displayName;
  private Schema writtenSchema;

  GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName) {
    super(messages, allocator);
    this.displayName = displayName;
  }

  @Override
  protected Schema readSchema() throws IOException {
    writtenSchema = super.readSchema();
    // Refuse unmappable types before Arrow creates vectors for them.
    SparkTypeMapping.sparkSchema(writtenSchema, displayName);
    return writtenSchema;
  }

  Schema writtenSchema() throws IOException {
    getVectorSchemaRoot();
    return writtenSchema;
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
