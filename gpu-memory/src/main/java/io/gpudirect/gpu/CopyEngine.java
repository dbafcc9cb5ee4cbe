package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaStream_t;

/**
 * Copies pinned chunks to device memory on its own CUDA stream, so that chunk i crosses PCIe
 * while chunk i+1 is still arriving from the socket. Each copy is followed by an event; a
 * completion thread waits on the events in order (one stream runs its copies in order) and
 * gives each chunk back to its pool only once the GPU has read it.
 *
 * <p>A copy may also have the GPU compute the CRC32C of the bytes where they landed
 * ({@link #copyToDeviceWithCrc32c}). The completion thread queues that kernel on a second
 * stream once the copy has landed, after giving the chunk back, and a second thread waits for
 * it. So a caller's thread makes only the copy's two CUDA calls under the engine's lock. With
 * the kernel's calls there too, callers over 16 streams waited 0.14-0.17 s per GB for that lock,
 * against 0.03 without checksums, and 0.03 now (docs/benchmarks.md, "Into GPU memory").
 *
 * <p>Thread-safe: several readers may share an engine; their copies queue on one stream.
 */
public final class CopyEngine implements AutoCloseable {
  /** CRC32C results the GPU can hold for the completion thread at once (4 bytes each). */
  private static final int CRC_SLOTS = 256;
  /**
   * Whether the completion threads sleep while they wait for the GPU
   * ({@code -Dgpudirect.copyEngine.blockingSync=true}) instead of spinning, as CUDA's default
   * scheduling has them do while copies are queued. Off by default: a wake-up per chunk adds
   * latency to every read, and at 16 streams on the lab's H100 host it gained nothing (0.91
   * against 0.90 of the raw socket into the device; the completion threads used 0.01-0.02 CPU s
   * per GB either way; docs/benchmarks.md).
   */
  private static final boolean BLOCKING_SYNC = Boolean.getBoolean("gpudirect.copyEngine.blockingSync");

  private final cudaStream_t stream;
  /** Copies whose chunk is still to go back to the pool, in stream order. */
  private final ArrayDeque<Pending> copies = new ArrayDeque<>();
  /** CRC32Cs still to come, in the checksum stream's order. */
  private final ArrayDeque<Check> checks = new ArrayDeque<>();
  /** Events whose last use is over: creating and destroying one per copy cost two CUDA calls. */
  private final ArrayDeque<cudaEvent_t> spareEvents = new ArrayDeque<>();
  private final Thread copyCompletions;
  /** Null where the kernel does not load; then {@link #checksumsOnDevice()} is false. */
  private final DeviceCrc32c crc32c;
  private final cudaStream_t checksumStream;
  private final Thread checkCompletions;
  /** Where the kernel sums each CRC (device) and where it is then copied for us (pinned host). */
  private final long crcDevice;
  private final ByteBuffer crcHost;
  /** Slots no CRC32C holds: a check takes one until its CRC has been read back. */
  private final int[] freeSlots = new int[CRC_SLOTS];
  private int freeSlotCount;
  private boolean closed;

  /**
   * One queued copy, and with {@code crc} the CRC32C to compute once it has landed. Its future
   * completes with the CRC, a plain copy's with null.
   */
  private record Pending(cudaEvent_t copied, PinnedChunk chunk, int length, long deviceAddress, boolean crc,
      CompletableFuture<Integer> done) {}

  /** A CRC32C queued on the checksum stream: read from {@code slot} once {@code checked} has fired. */
  private record Check(cudaEvent_t checked, int slot, CompletableFuture<Integer> done) {}

  public CopyEngine() {
    this(true);
  }

  /**
   * @param checksumsOnDevice false leaves checksums to the CPU, as they arrive: what every
   *     fetch did before the GPU kernel, kept for comparison
   */
  public CopyEngine(boolean checksumsOnDevice) {
    if (!GpuEnvironment.get().gpu()) {
      throw new GpuDirectException("No GPU: " + GpuEnvironment.get().reason());
    }
    this.stream = Cuda.createStream();
    this.crc32c = checksumsOnDevice ? DeviceCrc32c.get() : null;
    if (crc32c != null) {
      checksumStream = Cuda.createStream();
      crcDevice = Cuda.malloc(4L * CRC_SLOTS);
      crcHost = ByteBuffer.allocateDirect(4 * CRC_SLOTS).order(ByteOrder.LITTLE_ENDIAN);
      Cuda.hostRegister(crcHost);
      for (int slot = 0; slot < CRC_SLOTS; slot++) {
        freeSlots[freeSlotCount++] = slot;
      }
      checkCompletions = new Thread(this::completeChecks, "gpudirect-checksum-completions");
      checkCompletions.setDaemon(true);
      checkCompletions.start();
    } else {
      checksumStream = null;
      crcDevice = 0;
      crcHost = null;
      checkCompletions = null;
    }
    this.copyCompletions = new Thread(this::completeCopies, "gpudirect-copy-completions");
    this.copyCompletions.setDaemon(true);
    this.copyCompletions.start();
  }

  /** Whether {@link #copyToDeviceWithCrc32c} can run here (the GPU kernel loaded). */
  public boolean checksumsOnDevice() {
    return crc32c != null;
  }

  /**
   * Queues a copy of {@code length} bytes from the start of {@code chunk} to
   * {@code deviceAddress}. The engine owns the chunk from now on and closes it when the copy
   * is done, or when it fails. The future completes at the same moment.
   */
  public CompletableFuture<Void> copyToDevice(PinnedChunk chunk, int length, long deviceAddress) {
    return queue(chunk, length, deviceAddress, false).thenApply(crc -> null);
  }

  /**
   * As {@link #copyToDevice}, then the GPU computes the CRC32C of the {@code length} bytes at
   * {@code deviceAddress}: the future completes with it, once both have run (the chunk goes
   * back to the pool as soon as the copy is done). Only where {@link #checksumsOnDevice()}.
   */
  public CompletableFuture<Integer> copyToDeviceWithCrc32c(PinnedChunk chunk, int length, long deviceAddress) {
    if (crc32c == null) {
      chunk.close();
      throw new GpuDirectException("The GPU CRC32C kernel is not loaded here");
    }
    return queue(chunk, length, deviceAddress, true);
  }

  private CompletableFuture<Integer> queue(PinnedChunk chunk, int length, long deviceAddress, boolean crc) {
    CompletableFuture<Integer> done = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        chunk.close();
        throw new GpuDirectException("Copy engine is closed");
      }
      cudaEvent_t copied;
      try {
        Cuda.copyToDeviceAsync(deviceAddress, chunk.view(), length, stream);
        copied = event();
        Cuda.record(copied, stream);
      } catch (RuntimeException e) {
        // A copy already queued still reads the chunk: wait for the stream before giving it back.
        Cuda.synchronize(stream);
        chunk.close();
        throw e;
      }
      copies.add(new Pending(copied, chunk, length, deviceAddress, crc, done));
      notifyAll();
    }
    return done;
  }

  /** Waits until every copy queued so far has landed in device memory. */
  public void synchronize() {
    Cuda.synchronize(stream);
  }

  /** A spare event, or a new one; the caller holds the lock. */
  private cudaEvent_t event() {
    cudaEvent_t e = spareEvents.poll();
    return e != null ? e : Cuda.createEvent(BLOCKING_SYNC);
  }

  /** Gives chunks back as their copies land, and queues the CRC32C of those that asked for one. */
  private void completeCopies() {
    Pending p;
    while ((p = next(copies, false)) != null) {
      RuntimeException failure = null;
      try {
        Cuda.synchronize(p.copied());
      } catch (RuntimeException e) {
        failure = e;
      } finally {
        p.chunk().close();
      }
      Check check = null;
      if (failure == null && p.crc()) {
        try {
          check = queueCheck(p);
        } catch (RuntimeException e) {
          failure = e;
        }
      }
      synchronized (this) {
        copies.poll();
        spareEvents.add(p.copied());
        if (check != null) {
          checks.add(check);
        }
        notifyAll();
      }
      if (failure != null) {
        p.done().completeExceptionally(failure);
      } else if (!p.crc()) {
        p.done().complete(null);
      }
    }
  }

  /**
   * Queues the CRC32C of a landed copy's bytes on the checksum stream, into a free slot. Waits
   * for one while all are taken: the checksum thread frees them and needs nothing of this one.
   */
  private Check queueCheck(Pending p) {
    int slot;
    cudaEvent_t checked;
    synchronized (this) {
      while (freeSlotCount == 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new GpuDirectException("Interrupted while waiting to queue a CRC32C", e);
        }
      }
      slot = freeSlots[--freeSlotCount];
      checked = event();
    }
    try {
      long sum = crcDevice + 4L * slot;
      Cuda.zeroAsync(sum, 4, checksumStream);
      crc32c.launch(p.deviceAddress(), p.length(), sum, checksumStream);
      Cuda.copyToHostAsync(crcHost.duplicate().position(4 * slot), sum, 4, checksumStream);
      Cuda.record(checked, checksumStream);
    } catch (RuntimeException e) {
      // What was queued before the failure may still write the slot: let the stream finish first.
      try {
        Cuda.synchronize(checksumStream);
      } catch (RuntimeException stuck) {
        e.addSuppressed(stuck);
      }
      synchronized (this) {
        freeSlots[freeSlotCount++] = slot;
        spareEvents.add(checked);
        notifyAll();
      }
      throw e;
    }
    return new Check(checked, slot, p.done());
  }

  /** Reads each CRC32C back once the GPU has computed it. */
  private void completeChecks() {
    Check c;
    while ((c = next(checks, true)) != null) {
      RuntimeException failure = null;
      int crc = 0;
      try {
        Cuda.synchronize(c.checked());
        crc = crcHost.getInt(4 * c.slot());
      } catch (RuntimeException e) {
        failure = e;
      }
      synchronized (this) {
        checks.poll();
        spareEvents.add(c.checked());
        freeSlots[freeSlotCount++] = c.slot();
        notifyAll();
      }
      if (failure != null) {
        c.done().completeExceptionally(failure);
      } else {
        c.done().complete(crc);
      }
    }
  }

  /**
   * The head of {@code queue} once there is one; null once the engine is closed and nothing
   * is left for this thread (for the checks: nor can come, all copies being done).
   */
  private synchronized <T> T next(ArrayDeque<T> queue, boolean afterCopies) {
    while (queue.isEmpty() && !(closed && (!afterCopies || copies.isEmpty()))) {
      try {
        wait();
      } catch (InterruptedException e) {
        return null;
      }
    }
    return queue.peek();
  }

  /** Waits for queued copies and checksums to finish, then destroys the streams. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      notifyAll();
    }
    try {
      copyCompletions.join();
      if (checkCompletions != null) {
        checkCompletions.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    spareEvents.forEach(Cuda::destroyEvent);
    Cuda.destroyStream(stream);
    if (crc32c != null) {
      Cuda.destroyStream(checksumStream);
      Cuda.hostUnregister(crcHost);
      Cuda.free(crcDevice);
    }
  }
}
