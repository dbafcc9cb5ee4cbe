package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The end of a worker loop: once its thread closes the worker, no other thread may signal it.
 * A signal after the close writes to a closed eventfd (UCX says "Signaling wakeup failed" on the
 * process's stdout and jucx throws "Input/output error"; the descriptor may by then be another
 * file's). 2026-12-06's CI met it in {@code UnprovenQueuePairsTest}, on a stranger's close.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WorkerLoopEndTest {
  @BeforeAll
  static void ucx() {
    RdmaOverUcxConformanceTest.needsUcx();
  }

  /**
   * Threads hand work to a loop while its last reference goes: each hand-over either runs or is
   * refused with the loop's own error, never a failed signal of the closed worker.
   */
  @Test
  void workHandedToAnEndingLoopRunsOrIsRefused() throws Exception {
    List<Throwable> wrong = Collections.synchronizedList(new ArrayList<>());
    for (int round = 0; round < 300 && wrong.isEmpty(); round++) {
      WorkerLoop loop = new WorkerLoop(HostileUcxServer.sharedContext(), "test-ending-loop");
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> senders = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        Thread sender = new Thread(() -> {
          try {
            go.await();
            while (true) {
              loop.execute(() -> { });
            }
          } catch (IllegalStateException closed) {
            // the loop refused: it is ending
          } catch (Throwable t2) {
            wrong.add(t2);
          }
        });
        sender.start();
        senders.add(sender);
      }
      go.countDown();
      Thread.sleep(round % 3);
      loop.release();
      for (Thread sender : senders) {
        sender.join(10_000);
      }
    }
    assertTrue(wrong.isEmpty(), "a hand-over to an ending loop failed otherwise: " + wrong);
  }

  @Test
  void aLoopsLastReleaseIsItsEnd() {
    WorkerLoop loop = new WorkerLoop(HostileUcxServer.sharedContext(), "test-released-loop");
    loop.release();
    assertThrows(IllegalStateException.class, () -> loop.execute(() -> { }));
    assertThrows(IllegalStateException.class, loop::retain);
    assertThrows(IllegalStateException.class, loop::release, "a release more than retained is the holder's bug");
  }
}
