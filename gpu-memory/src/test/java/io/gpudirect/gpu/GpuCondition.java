package io.gpudirect.gpu;

import static org.junit.jupiter.api.extension.ConditionEvaluationResult.disabled;
import static org.junit.jupiter.api.extension.ConditionEvaluationResult.enabled;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/** What {@link GpuTest} asks of the machine: a class or method runs only where CUDA (and cuDF) work. */
final class GpuCondition implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Optional<GpuTest> marked = AnnotationSupport.findAnnotation(context.getElement(), GpuTest.class);
    if (marked.isEmpty()) {
      return enabled("not marked @GpuTest here");
    }
    GpuEnvironment env = GpuEnvironment.get();
    if (!env.gpu()) {
      return disabled("skipped: no GPU here (" + env.reason() + ")");
    }
    if (marked.get().cudf() && !env.cudf()) {
      return disabled("skipped: needs cuDF, which does not load here (" + env.reason() + ")");
    }
    return enabled(env.reason());
  }
}
