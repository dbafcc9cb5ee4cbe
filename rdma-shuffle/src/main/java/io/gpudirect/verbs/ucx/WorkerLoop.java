package io.gpudirect.verbs.ucx;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One UCX worker and the thread that progresses it. A worker is not thread-safe, so every call
 * on it and on its endpoints runs on this thread: other threads hand work over with
 * {@link #execute} or {@link #call}, and UCX calls its callbacks here, inside
 * {@code progress()}. With nothing to do the thread sleeps in {@code ucp_worker_wait} until
 * the network or {@code ucp_worker_signal} wakes it. Reference counted: a listener's loop lives
 * on while endpoints it accepted do.
 *
 * <p>Other threads signal the worker, and the loop's thread closes it at the end: both happen
 * under this object's lock, so no signal ever reaches a closed worker (whose eventfd may by then
 * be another file's).
 *
 * <p>One per UCX context ({@link UcxVerbs}): UCX before 1.18 can abort a process that runs
 * several. An event its async thread set aside for one worker's socket is delivered later even
 * when that socket has closed and its number went to another worker's, and UCX asserts
 * ({@code async.c:643 handler->async == async}, openucx/ucx#9942).
 */
final class WorkerLoop {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerLoop.class);
  /** Loops whose worker is open, in this JVM. */
  private static final java.util.concurrent.atomic.AtomicInteger OPEN = new java.util.concurrent.atomic.AtomicInteger();

  private final UcpWorker worker;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  /** Requests being watched, each with what runs when it completes. Loop thread only. */
  private final java.util.List<java.util.Map.Entry<UcpRequest, Runnable>> watched = new java.util.ArrayList<>();
  private int references = 1;
  private volatile boolean stopping;
  /** Guarded by this: the worker is closed and must not be signalled. */
  private boolean closed;
  private long failedWaits;

  WorkerLoop(UcpContext context, String name) {
    this.worker = context.newWorker(new UcpWorkerParams());
    OPEN.incrementAndGet();
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** How many UCX workers this JVM has open through loops. */
  static int open() {
    return OPEN.get();
  }

  UcpWorker worker() {
    return worker;
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop thread, later (never inline, so callers may hold no locks it needs). */
  void execute(Runnable task) {
    synchronized (this) {
      if (stopping || closed) {
        throw new IllegalStateException("UCX worker " + thread.getName() + " is closed");
      }
      tasks.add(task);
      worker.signal();
    }
  }

  /** Runs {@code task} on the loop thread and waits for it; inline when already there. */
  <T> T call(Callable<T> task, Duration timeout) {
    if (inLoop()) {
      try {
        return task.call();
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    execute(() -> {
      try {
        result.complete(task.call());
      } catch (Throwable t) {
        result.completeExceptionally(t);
      }
    });
    try {
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("UCX worker " + thread.getName() + " did not answer within "
          + timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for UCX worker " + thread.getName(), e);
    }
  }

  /**
   * Runs {@code then} on the loop thread once {@code request} has completed (at once when it
   * has, or is null): UCX completes requests inside progress. Call on the loop thread.
   */
  void whenDone(UcpRequest request, Runnable then) {
    if (request == null || request.isCompleted()) {
      then.run();
    } else {
      watched.add(java.util.Map.entry(request, then));
    }
  }

  private void runCompleted() {
    java.util.List<Runnable> ready = new java.util.ArrayList<>();
    watched.removeIf(w -> w.getKey().isCompleted() && ready.add(w.getValue()));
    for (Runnable r : ready) {
      try {
        r.run();
      } catch (Throwable t) {
        LOG.warn("UCX worker {}: a completion task failed", thread.getName(), t);
      }
    }
  }

  synchronized void retain() {
    if (references == 0) {
      throw new IllegalStateException("UCX worker " + thread.getName() + " is closed");
    }
    references++;
  }

  /** Drops a reference; the last one stops the thread, which then closes the worker. */
  synchronized void release() {
    if (references == 0) {
      throw new IllegalStateException("UCX worker " + thread.getName() + " was released more often than retained");
    }
    if (--references > 0) {
      return;
    }
    stopping = true;
    if (!closed) {
      worker.signal();
    }
  }

  private void run() {
    try {
      while (!stopping || !tasks.isEmpty()) {
        Runnable task;
        while ((task = tasks.poll()) != null) {
          try {
            task.run();
          } catch (Throwable t) {
            LOG.warn("UCX worker {}: a task failed", thread.getName(), t);
          }
        }
        int events;
        try {
          events = worker.progress();
        } catch (Exception e) {
          LOG.warn("UCX worker {}: progress failed: {}", thread.getName(), e.toString());
          events = 0;
        }
        if (!watched.isEmpty()) {
          runCompleted();
        }
        if (events == 0 && tasks.isEmpty() && !stopping) {
          waitForEvents();
        }
      }
      // What closing endpoints left to finish (force-closes, flushes) completes here.
      for (int i = 0; i < 100 && worker.progress() > 0; i++) {
        runCompleted();
      }
      runCompleted();
    } catch (Exception e) {
      LOG.warn("UCX worker {} stopped: {}", thread.getName(), e.toString());
    } finally {
      synchronized (this) {
        closed = true;
        worker.close();
        OPEN.decrementAndGet();
      }
    }
  }

  /**
   * Sleeps until the network or a signal wakes the worker. A failed wait must not end the loop:
   * its endpoints would go silent with references still held. The loop goes on progressing, a
   * millisecond apart, and says so once.
   */
  private void waitForEvents() {
    try {
      worker.waitForEvents();
    } catch (RuntimeException e) {
      if (failedWaits++ == 0) {
        LOG.warn("UCX worker {}: waiting for events failed ({}); it polls every millisecond instead",
            thread.getName(), e.toString());
      }
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
