package io.gpudirect.spark.arrow;

import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Arrow's file reader with {@link LoadedBatchCheck} around every batch and dictionary it loads,
 * decompressing LZ4/ZSTD bodies through {@link BoundedCodecs}.
 */
final class GuardedFileReader extends ArrowFileReader {
  private final String displayName;

  GuardedFileReader(SeekableByteChannel channel, BufferAllocator allocator, String displayName) {
    super(channel, allocator, new BoundedCodecs(displayName));
    this.displayName = displayName;
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
