package io.gpudirect.spark.arrow;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow's stream reader over a {@link BoundedMessageReader}, with {@link LoadedBatchCheck}
 * around every batch and dictionary it loads, decompressing LZ4/ZSTD bodies through
 * {@link BoundedCodecs}. It keeps the schema as written (Arrow's root
 * holds dictionary-encoded columns as their index type).
 */
final class GuardedStreamReader extends ArrowStreamReader {
  private final String displayName;
  private Schema writtenSchema;

  GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName) {
    super(messages, allocator, new BoundedCodecs(displayName));
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
    GuardedLoads.recordBatch(this, batch, super::loadRecordBatch, displayName);
  }

  @Override
  protected void loadDictionary(ArrowDictionaryBatch batch) {
    GuardedLoads.dictionary(dictionaries, batch, super::loadDictionary, displayName);
  }

}
