package io.gpudirect.arrow;

import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Arrow's file reader with {@link LoadedBatchCheck} around every batch and dictionary it loads,
 * decompressing LZ4/ZSTD bodies through {@link BoundedCodecs}.
 */
public final class GuardedFileReader extends ArrowFileReader {
  private final String displayName;
  private final BoundedCodecs codecs;

  public GuardedFileReader(SeekableByteChannel channel, BufferAllocator allocator, String displayName) {
    this(channel, allocator, displayName, new BoundedCodecs(displayName));
  }

  private GuardedFileReader(SeekableByteChannel channel, BufferAllocator allocator, String displayName,
      BoundedCodecs codecs) {
    super(channel, allocator, codecs);
    this.displayName = displayName;
    this.codecs = codecs;
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
