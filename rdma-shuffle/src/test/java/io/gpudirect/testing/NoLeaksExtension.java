package io.gpudirect.testing;

import io.gpudirect.memory.BufferAllocator;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After a test class: no bytes outstanding in {@link BufferAllocator#root()} (direct and pinned
 * host buffers both come from it) and no per-client or per-server thread still alive
 * ({@code gpudirect-client-*}, {@code gpudirect-server-accept-*}, {@code gpudirect-server-conn-*}:
 * a client or server left open, or one whose close did not stop its threads). The shared
 * checksum pools ({@code gpudirect-crc-verify}, {@code gpudirect-server-checksum}) live as long
 * as the JVM and are not counted. Use with {@code @ExtendWith(NoLeaksExtension.class)}; the class's own
 * {@code @AfterAll} methods run first, so it may close its servers and clients there. jqwik
 * property classes, which Jupiter extensions do not reach, call {@link #assertNoLeaks} from
 * their {@code @AfterContainer}.
 */
public final class NoLeaksExtension implements AfterAllCallback {
  static final String CLIENT_THREADS = "gpudirect-client-";
  private static final List<String> OWNED_THREADS = List.of(CLIENT_THREADS,
      "gpudirect-server-accept-", "gpudirect-server-conn-", "gpudirect-server-reject");

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    assertNoLeaks(context.getDisplayName());
  }

  /** Fails, naming {@code test}, when buffers are outstanding or owned threads still run. */
  public static void assertNoLeaks(String test) throws InterruptedException {
    BufferAllocator root = BufferAllocator.root();
    if (root.outstandingBytes() != 0) {
      throw new AssertionError(test + " left " + root.outstandingBytes() + " bytes in "
          + root.outstandingBuffers() + " buffers outstanding in " + root);
    }
    for (String prefix : OWNED_THREADS) {
      if (TestFiles.settledThreads(prefix, 0) != 0) {
        String names = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
            .map(Thread::getName).sorted().collect(Collectors.joining(", "));
        throw new AssertionError(test + " left threads running: " + names);
      }
    }
  }
}
