package io.gpudirect.gpu;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class (or method) that needs a GPU: tagged {@code gpu}, which the build leaves out
 * and the GPU lab selects ({@code --include-tag gpu}), and skipped, saying why, where CUDA does
 * not work, before any {@code @BeforeAll} of the class runs. Every module's tests see it through
 * gpu-memory's test-jar.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(GpuCondition.class)
public @interface GpuTest {
  /**
   * Whether cuDF must load too (its device buffers, RMM, its readers): most GPU tests need it.
   * False for those that need CUDA alone, and for those that bring cuDF in the RAPIDS plugin's
   * jar and check for the plugin themselves.
   */
  boolean cudf() default true;
}
