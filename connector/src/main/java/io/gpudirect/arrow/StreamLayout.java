package io.gpudirect.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Where the messages of an Arrow IPC stream lie, found by reading only their metadata: a
 * stream has no footer, so the schema comes first and each record or dictionary batch is told
 * apart by its header, whose body length says where the next one starts. Bodies are never
 * read here.
 *
 * @param batches the record and dictionary batches in stream order: a dictionary batch applies
 *     to the record batches after it, until another one with its id replaces it
 */
public record StreamLayout(Schema schema, List<ArrowBlock> recordBatches, List<Batch> batches) {
  /** A record or dictionary batch of the stream. */
  public record Batch(ArrowBlock block, boolean dictionary) {}

  /** {@code 0xFFFFFFFF} before a message's length since Arrow 0.15; older streams lack it. */
  private static final int CONTINUATION = -1;

  public static StreamLayout scan(SeekableByteChannel channel, long size, String displayName) throws IOException {
    try {
      return scanMessages(channel, size, displayName);
    } catch (IOException | ArrowFormatException e) {
      throw e;
    } catch (RuntimeException | StackOverflowError e) {
      // Flatbuffer accessors and Arrow's schema conversion throw whatever hostile bytes provoke.
      throw Failures.named(displayName, "its stream metadata is malformed", e);
    }
  }

  private static StreamLayout scanMessages(SeekableByteChannel channel, long size, String displayName)
      throws IOException {
    long at = 0;
    Schema schema = null;
    List<ArrowBlock> records = new ArrayList<>();
    List<Batch> batches = new ArrayList<>();
    while (at + 4 <= size) {
      ByteBuffer head = FileFooter.readAt(channel, at, (int) Math.min(8, size - at), displayName)
          .order(ByteOrder.LITTLE_ENDIAN);
      int prefix = head.getInt(0) == CONTINUATION ? 8 : 4;
      if (prefix > head.remaining()) {
        throw new ArrowFormatException(displayName, "it ends inside the message prefix at " + at);
      }
      int length = head.getInt(prefix - 4);
      if (length == 0) {
        break; // End of stream.
      }
      if (length < 0 || length > size - at - prefix) {
        throw new ArrowFormatException(displayName, "the message at " + at + " claims " + length
            + " bytes of metadata, past the end of its " + size + " bytes");
      }
      ByteBuffer metadata = FileFooter.readAt(channel, at + prefix, length, displayName).order(ByteOrder.LITTLE_ENDIAN);
      Message message = Message.getRootAsMessage(metadata);
      long body = message.bodyLength();
      long bodyStart = at + prefix + length;
      if (body < 0 || body > size - bodyStart) {
        throw new ArrowFormatException(displayName, "the message at " + at + " claims a " + body
            + "-byte body, past the end of its " + size + " bytes");
      }
      String where = "the message at offset " + at;
      if (schema == null) {
        MessageCheck.checkSchemaMessage(message, body, where, displayName);
        schema = MessageSerializer.deserializeSchema(message);
      } else if (message.headerType() == MessageHeader.RecordBatch) {
        records.add(new ArrowBlock(at, prefix + length, body));
        batches.add(new Batch(records.get(records.size() - 1), false));
      } else if (message.headerType() == MessageHeader.DictionaryBatch) {
        batches.add(new Batch(new ArrowBlock(at, prefix + length, body), true));
      } else {
        throw new ArrowFormatException(displayName, where + " is of type " + message.headerType()
            + " where a record batch belongs");
      }
      at = bodyStart + body;
    }
    if (schema == null) {
      throw new ArrowFormatException(displayName, "it holds no schema message, so it is not an Arrow IPC stream");
    }
    return new StreamLayout(schema, records, batches);
  }
}
