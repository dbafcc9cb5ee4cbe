package io.gpudirect.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageChannelReader;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * Arrow's stream message reader, made safe for hostile input: before Arrow allocates a
 * message's metadata (on the heap) and its body, this checks both lengths against what is
 * left of the channel, so a lying length fails here instead of allocating gigabytes.
 *
 * <p>Each message is {@code [0xFFFFFFFF] <int32 metadata length> <metadata> <body>}; a
 * metadata length of 0 ends the stream.
 */
public final class BoundedMessageReader extends MessageChannelReader {
  private static final int CONTINUATION = 0xFFFFFFFF;

  private final SeekableByteChannel channel;
  private final long size;
  private final String displayName;
  private boolean schemaRead;

  public BoundedMessageReader(SeekableByteChannel channel, long size, BufferAllocator allocator, String displayName) {
    super(new ReadChannel(channel), allocator);
    this.channel = channel;
    this.size = size;
    this.displayName = displayName;
  }

  @Override
  public MessageResult readNext() throws IOException {
    long start = channel.position();
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    while (prefix.hasRemaining() && channel.read(prefix) >= 0) {
      // Reads until 8 bytes or the end of the channel.
    }
    int read = prefix.position();
    int prefixLength = 4;
    int metadataLength = read >= 4 ? prefix.getInt(0) : 0;
    if (metadataLength == CONTINUATION) {
      prefixLength = 8;
      metadataLength = read >= 8 ? prefix.getInt(4) : 0;
    }
    long afterPrefix = start + prefixLength;
    if (metadataLength < 0 || metadataLength > size - afterPrefix) {
      throw new ArrowFormatException(displayName, "the message at offset " + start + " claims "
          + metadataLength + " bytes of metadata, but only " + Math.max(0, size - afterPrefix) + " follow");
    }
    if (metadataLength > 0) {
      channel.position(start);
      MessageMetadataResult metadata = MessageSerializer.readMessage(new ReadChannel(channel));
      long body = metadata == null ? 0 : metadata.getMessageBodyLength();
      long left = size - channel.position();
      if (body < 0 || body > left) {
        throw new ArrowFormatException(displayName, "the message at offset " + start + " claims a body of "
            + body + " bytes, but only " + left + " follow");
      }
      if (metadata != null) {
        String where = "the message at offset " + start;
        if (schemaRead) {
          MessageCheck.checkBatchMessage(metadata.getMessage(), body, where, displayName);
        } else {
          MessageCheck.checkSchemaMessage(metadata.getMessage(), body, where, displayName);
          schemaRead = true;
        }
      }
    }
    channel.position(start);
    return super.readNext();
  }
}
