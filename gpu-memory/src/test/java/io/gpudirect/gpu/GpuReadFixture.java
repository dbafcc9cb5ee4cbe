package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The {@link GpuResources} a GPU test class reads through: a pinned pool of small chunks (so
 * that even small files take several overlapped copies), its copy engine and its device
 * allocators, made before the class's first test and closed after its last (after the class's
 * own {@code @AfterAll}, so its servers and clients close first). After each test no pinned
 * chunk may still be lent and no device byte still charged. Register it on a {@link GpuTest}
 * class:
 *
 * <pre>{@code
 * @RegisterExtension static final GpuReadFixture gpu = GpuReadFixture.chunksOf(64 * 1024);
 * }</pre>
 */
public final class GpuReadFixture implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
  private static final int CHUNKS = 4;
  private static final long DEVICE_LIMIT = 1L << 30;

  private final int chunkSize;
  private GpuResources resources;

  private GpuReadFixture(int chunkSize) {
    this.chunkSize = chunkSize;
  }

  /** Four pinned chunks of {@code chunkSize} bytes, and 1 GiB of device memory at most. */
  public static GpuReadFixture chunksOf(int chunkSize) {
    return new GpuReadFixture(chunkSize);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (!GpuEnvironment.get().gpu()) {
      throw new GpuDirectException(context.getDisplayName() + " registers a GpuReadFixture but runs where there is"
          + " no GPU (" + GpuEnvironment.get().reason() + "): mark the class @GpuTest, which skips it here");
    }
    resources = GpuResources.create(new GpuSettings(CHUNKS, DEVICE_LIMIT, GpuSettings.DEFAULTS.prefetchFraction()),
        chunkSize);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    int lent = resources.pool().chunksInUse();
    long charged = resources.device().accounts().outstandingBytes();
    if (lent != 0 || charged != 0) {
      throw new AssertionError(context.getDisplayName() + " left " + lent + " pinned chunks lent and " + charged
          + " device bytes charged: " + resources.device().accounts().outstanding());
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (resources != null) {
      resources.close();
      resources = null;
    }
  }

  public PinnedChunkPool pool() {
    return resources().pool();
  }

  public CopyEngine engine() {
    return resources().engine();
  }

  /** Where the tests' device buffers come from; every byte of it is given back after each test. */
  public DeviceAllocator device() {
    return resources().device();
  }

  /** The part of {@link #device()} that bytes fetched ahead of their decode are charged to. */
  public DeviceAllocator prefetch() {
    return resources().prefetch();
  }

  private GpuResources resources() {
    if (resources == null) {
      throw new IllegalStateException("GpuReadFixture is used outside the tests of the class that registers it"
          + " (it must be a static @RegisterExtension field)");
    }
    return resources;
  }
}
