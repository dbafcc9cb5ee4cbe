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

  private final BoundedCodecs codecs;

  GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName) {
    this(messages, allocator, displayName, new BoundedCodecs(displayName));
  }

  private GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName,
      BoundedCodecs codecs) {
    super(messages, allocator, codecs);
    this.displayName = displayName;
    this.codecs = codecs;
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
    GuardedLoads.recordBatch(this, codecs, batch, super::loadRecordBatch, displayName);
  }

  @Override
  protected void loadDictionary(ArrowDictionaryBatch batch) {
    GuardedLoads.dictionary(dictionaries, codecs, batch, super::loadDictionary, displayName);
  }

}
