package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * Base of tests that need a GPU: tagged {@code gpu} (CI excludes the tag), and skipped with
 * the reason when run where CUDA does not work.
 */
@Tag("gpu")
public abstract class GpuTest {
  @BeforeAll
  static void requireGpu() {
    GpuEnvironment env = GpuEnvironment.get();
    assumeTrue(env.gpu(), "skipped: no GPU here (" + env.reason() + ")");
  }
}
