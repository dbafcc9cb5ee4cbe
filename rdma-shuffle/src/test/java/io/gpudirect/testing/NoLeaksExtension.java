package io.gpudirect.testing;

import io.gpudirect.memory.BufferAllocator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After a test class: no bytes outstanding in {@link BufferAllocator#root()} and no
 * {@code gpudirect-client-*} thread still alive (a client left open, or one whose close did
 * not stop its threads). Use with {@code @ExtendWith(NoLeaksExtension.class)}; the class's own
 * {@code @AfterAll} methods run first, so it may close its servers and clients there.
 */
public final class NoLeaksExtension implements AfterAllCallback {
  static final String CLIENT_THREADS = "gpudirect-client-";

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    String test = context.getDisplayName();
    BufferAllocator root = BufferAllocator.root();
    if (root.outstandingBytes() != 0) {
      throw new AssertionError(test + " left " + root.outstandingBytes() + " bytes in "
          + root.outstandingBuffers() + " buffers outstanding in " + root);
    }
    if (TestFiles.settledThreads(CLIENT_THREADS, 0) != 0) {
      String names = Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.isAlive() && t.getName().startsWith(CLIENT_THREADS))
          .map(Thread::getName).sorted().collect(Collectors.joining(", "));
      throw new AssertionError(test + " left client threads running: " + names);
    }
  }
}
