package io.gpudirect.spark.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import scala.reflect.ClassTag;

/**
 * The serializer a {@code DiskBlockObjectWriter} is given when the bytes it writes are serialized
 * already ({@link ThreadedBypassWriter}): its stream adds nothing, where the shuffle's own would
 * open each file with its header (Java serialization's stream magic, a second time after the one
 * the records' stream wrote), and only passes flush and close on to the compressed stream.
 */
final class SerializedBytes extends SerializerInstance {
  static final SerializedBytes INSTANCE = new SerializedBytes();

  private SerializedBytes() {}

  @Override
  public SerializationStream serializeStream(OutputStream out) {
    return new SerializationStream() {
      @Override
      public <T> SerializationStream writeObject(T t, ClassTag<T> tag) {
        throw new UnsupportedOperationException("Only serialized bytes are written here");
      }

      @Override
      public void flush() {
        try {
          out.flush();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }

      @Override
      public void close() {
        try {
          out.close();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }

  @Override
  public <T> ByteBuffer serialize(T t, ClassTag<T> tag) {
    throw new UnsupportedOperationException("Only serialized bytes are written here");
  }

  @Override
  public <T> T deserialize(ByteBuffer bytes, ClassTag<T> tag) {
    throw new UnsupportedOperationException("Nothing is read here");
  }

  @Override
  public <T> T deserialize(ByteBuffer bytes, ClassLoader loader, ClassTag<T> tag) {
    throw new UnsupportedOperationException("Nothing is read here");
  }

  @Override
  public DeserializationStream deserializeStream(InputStream in) {
    throw new UnsupportedOperationException("Nothing is read here");
  }
}
