package io.gpudirect.arrow;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The one Arrow root of the connector. Each reader takes a child and closes it, so a reader
 * that leaks a buffer fails loudly on close instead of growing the executor's memory.
 */
public final class ArrowMemory {
  private static final RootAllocator ROOT = new RootAllocator(Long.MAX_VALUE);

  private ArrowMemory() {}

  public static BufferAllocator child(String name) {
    return ROOT.newChildAllocator(name, 0, Long.MAX_VALUE);
  }

  public static long allocatedBytes() {
    return ROOT.getAllocatedMemory();
  }
}
