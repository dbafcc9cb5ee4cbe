package io.gpudirect.spark;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The RAPIDS Accelerator for the tests that run with it: its plugin class, and skipping where its jar is absent. */
public final class RapidsJar {
  /** What {@code spark.plugins} names to turn the plugin on. */
  public static final String PLUGIN = "com.nvidia.spark.SQLPlugin";

  private RapidsJar() {}

  /** Skips the calling test, saying why, unless the plugin's jar is on the class path. */
  public static void assumeOnClassPath() {
    boolean present;
    try {
      Class.forName(PLUGIN);
      present = true;
    } catch (ClassNotFoundException e) {
      present = false;
    }
    assumeTrue(present, "skipped: needs the RAPIDS Accelerator jar (rapids-4-spark_2.12 24.12, cuda12) on the class path");
  }
}
