package io.gpudirect.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.memory.HostBuffer;
import io.gpudirect.memory.HostBufferPool;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs small test classes through a JUnit launcher, as surefire does, and checks that the
 * auto-detected {@link NoLeaksExtension} fails the class that leaks and passes the one that
 * frees in {@code @AfterAll}: proof that every class really is checked without an annotation.
 */
class NoLeaksExtensionTest {
  /** Set only while this test runs the fixtures, so surefire running them on its own does nothing. */
  static volatile boolean running;
  static HostBuffer held;

  static class LeaksABuffer {
    @Test
    void allocatesAndKeeps() {
      assumeTrue(running);
      held = BufferAllocator.root().allocate(16);
    }
  }

  static class FreesInAfterAll {
    @Test
    void allocatesAndKeeps() {
      assumeTrue(running);
      held = BufferAllocator.root().allocate(16);
    }

    @AfterAll
    static void free() {
      if (held != null) {
        held.close();
        held = null;
      }
    }
  }

  static HostBufferPool pool;

  /** Idle buffers of an open pool are the pool's, kept for the next taker: not a leak. */
  static class KeepsIdleBuffersInAnOpenPool {
    @Test
    void takesAndGivesBack() {
      assumeTrue(running);
      pool.give(pool.take());
    }
  }

  /** A buffer taken from a pool and never given back is a leak, named as the pool names it. */
  static class KeepsABufferOfAPool {
    @Test
    void takesAndKeeps() {
      assumeTrue(running);
      held = pool.take();
    }
  }

  @Test
  void idleBuffersOfAnOpenPoolPassAndALentOneFailsNamingIt() {
    pool = new HostBufferPool(BufferAllocator.root(), "read-ahead piece", 32, 2);
    try {
      TestExecutionResult idle = runClass(KeepsIdleBuffersInAnOpenPool.class);
      assertEquals(TestExecutionResult.Status.SUCCESSFUL, idle.getStatus(), idle.toString());
      TestExecutionResult lent = runClass(KeepsABufferOfAPool.class);
      assertEquals(TestExecutionResult.Status.FAILED, lent.getStatus(), lent.toString());
      String message = lent.getThrowable().orElseThrow().getMessage();
      assertTrue(message.contains("KeepsABufferOfAPool left 32 bytes")
          && message.contains("read-ahead piece (32 bytes in 'root')"), message);
    } finally {
      if (held != null) {
        pool.give(held);
        held = null;
      }
      pool.close();
    }
  }

  @Test
  void aClassThatLeaksFailsNamingTheBytes() {
    try {
      TestExecutionResult result = runClass(LeaksABuffer.class);
      assertEquals(TestExecutionResult.Status.FAILED, result.getStatus(), result.toString());
      String message = result.getThrowable().orElseThrow().getMessage();
      assertTrue(message.contains("LeaksABuffer left 16 bytes in 1 buffers"), message);
    } finally {
      if (held != null) {
        held.close();
        held = null;
      }
    }
  }

  @Test
  void aClassThatFreesInAfterAllPasses() {
    TestExecutionResult result = runClass(FreesInAfterAll.class);
    assertEquals(TestExecutionResult.Status.SUCCESSFUL, result.getStatus(), result.toString());
  }

  /** The result of the class's own container, where an AfterAllCallback's failure lands. */
  private static TestExecutionResult runClass(Class<?> fixture) {
    List<TestExecutionResult> results = new ArrayList<>();
    LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
        .selectors(selectClass(fixture)).build();
    running = true;
    try {
      LauncherFactory.create().execute(request, new TestExecutionListener() {
        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
          if (id.getSource().filter(ClassSource.class::isInstance).isPresent()) {
            results.add(result);
          }
        }
      });
    } finally {
      running = false;
    }
    assertEquals(1, results.size(), "one class container ran");
    return results.get(0);
  }
}
