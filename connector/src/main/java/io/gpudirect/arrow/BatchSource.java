package io.gpudirect.arrow;

import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;

/** Loads the next record batch of a partition into the reader's one {@link VectorSchemaRoot}. */
public interface BatchSource {
  /** Loads the next batch, releasing the previous one's buffers; false at the end. */
  boolean loadNext() throws IOException;

  VectorSchemaRoot root() throws IOException;

  DictionaryProvider dictionaries();

  /** Names the batch last loaded, for errors. */
  String describe();

  /** Consecutive blocks of the file format, by their footer entries. */
  final class File implements BatchSource {
    private final GuardedFileReader reader;
    private final SeekableByteChannel channel;
    private final List<ArrowBlock> blocks;
    private final int first;
    private final String displayName;
    private int next;

    public File(GuardedFileReader reader, SeekableByteChannel channel, List<ArrowBlock> blocks, int first,
        String displayName) {
      this.reader = reader;
      this.channel = channel;
      this.blocks = blocks;
      this.first = first;
      this.displayName = displayName;
    }

    @Override
    public boolean loadNext() throws IOException {
      if (next == blocks.size()) {
        return false;
      }
      ArrowBlock block = blocks.get(next++);
      FileFooter.checkBlockMessage(channel, block, describe(), displayName);
      return reader.loadRecordBatch(block);
    }

    @Override
    public VectorSchemaRoot root() throws IOException {
      return reader.getVectorSchemaRoot();
    }

    @Override
    public DictionaryProvider dictionaries() {
      return reader;
    }

    @Override
    public String describe() {
      return "record batch " + (first + next - 1);
    }
  }

  /** Every batch of a stream, in order. */
  final class Stream implements BatchSource {
    private final ArrowReader reader;
    private int loaded;

    public Stream(ArrowReader reader) {
      this.reader = reader;
    }

    @Override
    public boolean loadNext() throws IOException {
      loaded++;
      return reader.loadNextBatch();
    }

    @Override
    public VectorSchemaRoot root() throws IOException {
      return reader.getVectorSchemaRoot();
    }

    @Override
    public DictionaryProvider dictionaries() {
      return reader;
    }

    @Override
    public String describe() {
      return "record batch " + (loaded - 1) + " of the stream";
    }
  }
}
