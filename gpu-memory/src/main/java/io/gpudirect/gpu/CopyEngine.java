package io.gpudirect.gpu;

import io.gpudirect.GpuDirectException;
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
 * <p>Thread-safe: several readers may share an engine; their copies queue on one stream.
 */
public final class CopyEngine implements AutoCloseable {
  private final cudaStream_t stream;
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  private final Thread completions;
  private boolean closed;

  private record Pending(cudaEvent_t event, PinnedChunk chunk, CompletableFuture<Void> done) {}

  public CopyEngine() {
    if (!GpuEnvironment.get().gpu()) {
      throw new GpuDirectException("No GPU: " + GpuEnvironment.get().reason());
    }
    this.stream = Cuda.createStream();
    this.completions = new Thread(this::complete, "gpudirect-copy-completions");
    this.completions.setDaemon(true);
    this.completions.start();
  }

  /**
   * Queues a copy of {@code length} bytes from the start of {@code chunk} to
   * {@code deviceAddress}. The engine owns the chunk from now on and closes it when the copy
   * is done, or when it fails. The future completes at the same moment.
   */
  public CompletableFuture<Void> copyToDevice(PinnedChunk chunk, int length, long deviceAddress) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    synchronized (this) {
      if (closed) {
        chunk.close();
        throw new GpuDirectException("Copy engine is closed");
      }
      cudaEvent_t event;
      try {
        Cuda.copyToDeviceAsync(deviceAddress, chunk.view(), length, stream);
        event = Cuda.createEvent();
        Cuda.record(event, stream);
      } catch (RuntimeException e) {
        chunk.close();
        throw e;
      }
      pending.add(new Pending(event, chunk, done));
      notifyAll();
    }
    return done;
  }

  /** Waits until every copy queued so far has landed in device memory. */
  public void synchronize() {
    Cuda.synchronize(stream);
  }

  private void complete() {
    while (true) {
      Pending p;
      synchronized (this) {
        while (pending.isEmpty() && !closed) {
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (pending.isEmpty()) {
          return;
        }
        p = pending.peek();
      }
      try {
        Cuda.synchronize(p.event());
        Cuda.destroyEvent(p.event());
        p.chunk().close();
        p.done().complete(null);
      } catch (RuntimeException e) {
        p.chunk().close();
        p.done().completeExceptionally(e);
      }
      synchronized (this) {
        pending.poll();
        notifyAll();
      }
    }
  }

  /** Waits for queued copies to finish, then destroys the stream. */
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
      completions.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Cuda.destroyStream(stream);
  }
}
