package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * What {@link GpuTest} and {@link GpuReadFixture} do where there is no GPU (this build's
 * machine), run through a JUnit launcher as surefire and the GPU lab run them: a marked class is
 * skipped with the reason before its {@code @BeforeAll} runs, a marked method alone is skipped,
 * and a fixture on an unmarked class fails saying how to mark it.
 */
class WithoutAGpuTest {
  static volatile boolean beforeAllRan;

  @GpuTest
  static class MarkedClass {
    @BeforeAll
    static void start() {
      beforeAllRan = true;
    }

    @Test
    void needsTheGpu() {}
  }

  static class MarkedMethod {
    @Test
    @GpuTest(cudf = false)
    void needsTheGpu() {}

    @Test
    void runsAnywhere() {}
  }

  static class FixtureWithoutMark {
    @RegisterExtension
    static final GpuReadFixture gpu = GpuReadFixture.chunksOf(64 * 1024);

    @Test
    void readsThroughTheGpu() {}
  }

  @BeforeAll
  static void noGpuHere() {
    assumeFalse(GpuEnvironment.get().gpu(), "a GPU is here: GpuTest's skip cannot be seen");
  }

  @Test
  void aMarkedClassIsSkippedWithTheReasonBeforeItsBeforeAll() {
    Map<String, Object> outcomes = run(MarkedClass.class);
    Object skipped = outcomes.get("MarkedClass");
    assertTrue(skipped instanceof String reason && reason.startsWith("skipped: no GPU here ("), outcomes.toString());
    assertFalse(outcomes.containsKey("needsTheGpu()"), "no test of the class ran: " + outcomes);
    assertFalse(beforeAllRan, "the class's @BeforeAll ran");
  }

  @Test
  void aMarkedMethodAloneIsSkipped() {
    Map<String, Object> outcomes = run(MarkedMethod.class);
    assertTrue(outcomes.get("needsTheGpu()") instanceof String, outcomes.toString());
    assertEquals(TestExecutionResult.Status.SUCCESSFUL, outcomes.get("runsAnywhere()"), outcomes.toString());
  }

  @Test
  void aFixtureOnAnUnmarkedClassFailsSayingHowToMarkIt() {
    Map<String, Object> outcomes = run(FixtureWithoutMark.class);
    assertEquals(TestExecutionResult.Status.FAILED, outcomes.get("FixtureWithoutMark"), outcomes.toString());
    assertTrue(String.valueOf(outcomes.get("FixtureWithoutMark: message")).contains("mark the class @GpuTest"),
        outcomes.toString());
  }

  /**
   * Each container's and test's outcome by display name (a nested class's without its outer
   * class): its status, or its skip reason.
   */
  private static Map<String, Object> run(Class<?> fixture) {
    Map<String, Object> outcomes = new LinkedHashMap<>();
    LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build(),
        new TestExecutionListener() {
          @Override
          public void executionSkipped(TestIdentifier id, String reason) {
            outcomes.put(name(id), reason);
          }

          @Override
          public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            outcomes.put(name(id), result.getStatus());
            result.getThrowable().ifPresent(t -> outcomes.put(name(id) + ": message", t.getMessage()));
          }
        });
    return outcomes;
  }

  private static String name(TestIdentifier id) {
    return id.getDisplayName().substring(id.getDisplayName().lastIndexOf('$') + 1);
  }
}
