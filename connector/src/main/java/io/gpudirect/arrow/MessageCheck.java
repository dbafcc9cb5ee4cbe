package io.gpudirect.arrow;

import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * Checks an IPC message's metadata before Arrow Java deserializes its body. Arrow leaks
 * the body (and fails with a NullPointerException or worse) when a message has no header,
 * an unexpected header type, row or null counts past int range, or buffers outside the
 * body; so those are refused here, while nothing is allocated yet or the body is still
 * ours to release.
 */
final class MessageCheck {
  private MessageCheck() {}

  static void checkBatchMessage(Message message, long bodyLength, String where, String displayName) {
    try {
      checkBatchHeader(message, bodyLength, where, displayName);
    } catch (IndexOutOfBoundsException e) {
      // A table or vector offset that points outside the metadata: flatbuffers throws on access.
      throw fail(where, "metadata whose offsets point outside the message", displayName);
    }
  }

  private static void checkBatchHeader(Message message, long bodyLength, String where, String displayName) {
    byte type = message.headerType();
    if (type == MessageHeader.RecordBatch) {
      RecordBatch batch = (RecordBatch) message.header(new RecordBatch());
      checkRecordBatch(batch, bodyLength, where, displayName);
    } else if (type == MessageHeader.DictionaryBatch) {
      DictionaryBatch dictionary = (DictionaryBatch) message.header(new DictionaryBatch());
      if (dictionary == null) {
        throw fail(where, "a dictionary batch message without its header", displayName);
      }
      checkRecordBatch(dictionary.data(), bodyLength, where, displayName);
    } else {
      throw fail(where, "a message of type " + type + " where a record or dictionary batch belongs", displayName);
    }
  }

  static void checkSchemaMessage(Message message, long bodyLength, String where, String displayName) {
    if (message.headerType() != MessageHeader.Schema || bodyLength != 0) {
      throw fail(where, "a message of type " + message.headerType() + " with a " + bodyLength
          + "-byte body where the schema belongs", displayName);
    }
  }

  private static void checkRecordBatch(RecordBatch batch, long bodyLength, String where, String displayName) {
    if (batch == null) {
      throw fail(where, "a record batch message without its header", displayName);
    }
    if (batch.length() < 0 || batch.length() > Integer.MAX_VALUE) {
      throw fail(where, "a record batch of " + batch.length() + " rows", displayName);
    }
    FieldNode node = new FieldNode();
    for (int i = 0; i < batch.nodesLength(); i++) {
      batch.nodes(node, i);
      if (node.length() < 0 || node.length() > Integer.MAX_VALUE
          || node.nullCount() < 0 || node.nullCount() > node.length()) {
        throw fail(where, "field node " + i + " of length " + node.length() + " with " + node.nullCount()
            + " nulls", displayName);
      }
    }
    // Arrow reads the compression table only after it has allocated the body, so a bad
    // offset there would throw from inside its reader and leak the body: read it here first.
    BodyCompression compression = batch.compression();
    if (compression != null) {
      compression.codec();
      compression.method();
    }
    Buffer buffer = new Buffer();
    for (int i = 0; i < batch.buffersLength(); i++) {
      batch.buffers(buffer, i);
      if (buffer.offset() < 0 || buffer.length() < 0 || buffer.offset() > bodyLength
          || buffer.length() > bodyLength - buffer.offset()) {
        throw fail(where, "buffer " + i + " (offset " + buffer.offset() + ", length " + buffer.length()
            + ") outside its " + bodyLength + "-byte body", displayName);
      }
    }
  }

  private static ArrowFormatException fail(String where, String what, String displayName) {
    return new ArrowFormatException(displayName, where + " holds " + what);
  }
}
