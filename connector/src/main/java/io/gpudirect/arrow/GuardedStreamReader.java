package io.gpudirect.arrow;

import java.io.IOException;
import java.util.function.Consumer;
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
public final class GuardedStreamReader extends ArrowStreamReader {
  private final String displayName;
  private final Consumer<Schema> typeCheck;
  private Schema writtenSchema;

  private final BoundedCodecs codecs;

  /**
   * @param typeCheck throws for a written schema whose types the consumer cannot map; it runs
   *     before Arrow creates vectors for them
   */
  public GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName,
      Consumer<Schema> typeCheck) {
    this(messages, allocator, displayName, typeCheck, new BoundedCodecs(displayName));
  }

  private GuardedStreamReader(BoundedMessageReader messages, BufferAllocator allocator, String displayName,
      Consumer<Schema> typeCheck, BoundedCodecs codecs) {
    super(messages, allocator, codecs);
    this.displayName = displayName;
    this.typeCheck = typeCheck;
    this.codecs = codecs;
  }

  @Override
  protected Schema readSchema() throws IOException {
    writtenSchema = super.readSchema();
    // Refuse unmappable types before Arrow creates vectors for them.
    typeCheck.accept(writtenSchema);
    return writtenSchema;
  }

  public Schema writtenSchema() throws IOException {
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
