package io.gpudirect.testing;

import io.gpudirect.gpu.GpuResources;
import io.gpudirect.gpu.PinnedChunkPool;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBufferPool;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After every test class: no bytes outstanding in {@link BufferAllocator#root()} (direct and
 * pinned host buffers, the device buffers of {@code GpuResources.device()}, cuDF's host
 * buffers, the connector's Arrow buffers and the network's buffers are all charged to it)
 * but the idle buffers of the pools not closed yet ({@link HostBufferPool}: read-ahead pieces
 * kept for the next reader), no chunk of a context's pinned pool still lent out,
 * and no per-client or per-server thread still alive ({@code gpudirect-client-*},
 * {@code gpudirect-server-accept-*}, {@code gpudirect-server-conn-*}: a client or server left
 * open, or one whose close did not stop its threads). The checksum pools
 * ({@code gpudirect-crc-verify} of a client context, the JVM's shared one included, and
 * {@code gpudirect-server-checksum} of a server) are not counted: their owners' tests check them. GPU tests also assert RMM's own count of device bytes, which sees what
 * cuDF allocates that no reader holds.
 *
 * <p>Every module's {@code junit-platform.properties} turns on extension auto-detection and
 * this class is listed in gpu-memory's test-jar under {@code META-INF/services}, so it runs
 * for every test class without an annotation. The class's own {@code @AfterAll} methods run
 * first, so it may close its servers and clients there. jqwik property classes, which Jupiter
 * extensions do not reach, call {@link #assertNoLeaks} from their {@code @AfterContainer}.
 */
public final class NoLeaksExtension implements AfterAllCallback {
  private static final List<String> OWNED_THREADS = List.of("gpudirect-client-",
      "gpudirect-server-accept-", "gpudirect-server-conn-", "gpudirect-server-reject");

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (context.getParent().flatMap(ExtensionContext::getTestClass).isPresent()) {
      return; // a @Nested class: its outer class may still hold what it shares; checked when that ends
    }
    assertNoLeaks(context.getDisplayName());
  }

  /** Fails, naming {@code test}, when buffers or pinned chunks are outstanding or owned threads still run. */
  public static void assertNoLeaks(String test) throws InterruptedException {
    // Each pinned pool a context made holds its chunks until that context closes.
    long poolBytes = 0;
    for (GpuResources gpu : GpuResources.open()) {
      PinnedChunkPool pool = gpu.pool();
      if (pool.chunksInUse() != 0) {
        throw new AssertionError(test + " left " + pool.chunksInUse()
            + " chunks of a context's pinned pool in use");
      }
      poolBytes += pool.heldBytes();
    }
    // Each buffer pool not closed yet keeps its idle buffers for the next taker.
    for (HostBufferPool pool : HostBufferPool.open()) {
      poolBytes += pool.idleBytes();
    }
    BufferAllocator root = BufferAllocator.root();
    if (root.outstandingBytes() != poolBytes) {
      throw new AssertionError(test + " left " + (root.outstandingBytes() - poolBytes) + " bytes in "
          + root.outstandingBuffers() + " buffers outstanding in " + root
          + (poolBytes == 0 ? "" : " (besides the pools' " + poolBytes + " idle or pinned)") + root.outstanding());
    }
    for (String prefix : OWNED_THREADS) {
      if (Settle.threads(prefix, 0) != 0) {
        String names = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith(prefix))
            .map(Thread::getName).sorted().collect(Collectors.joining(", "));
        throw new AssertionError(test + " left threads running: " + names);
      }
    }
  }
}
