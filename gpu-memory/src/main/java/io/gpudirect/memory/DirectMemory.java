package io.gpudirect.memory;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Frees a direct buffer's memory now instead of when the JVM collects the buffer, through
 * {@code sun.misc.Unsafe.invokeCleaner} (in {@code jdk.unsupported}, open to every class path
 * without a flag; Netty and Arrow free their direct memory the same way).
 */
final class DirectMemory {
  private static final sun.misc.Unsafe UNSAFE = unsafe();

  private DirectMemory() {}

  /** Frees {@code buffer}'s memory: no view of it may be touched again. */
  static void free(ByteBuffer buffer) {
    UNSAFE.invokeCleaner(buffer);
  }

  private static sun.misc.Unsafe unsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
