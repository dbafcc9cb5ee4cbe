package io.gpudirect.spark.rapids;

import io.gpudirect.GpuDirectException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.Properties;

/**
 * The RAPIDS Accelerator, seen through reflection: this project has no compile-time
 * dependency on it. Its SQL classes live in a per-Spark-version directory of its jar, reached
 * only through its shim loader's class loader; the loader and its version file sit at the
 * jar's root, on the application class path.
 */
final class RapidsPlugin {
  static final String SHIM_LOADER = "com.nvidia.spark.rapids.ShimLoader";
  /** The plugin's release line these classes were written and tested against. */
  static final String TESTED_LINE = "24.12.";
  static final String HOST_TO_GPU = "com.nvidia.spark.rapids.HostColumnarToGpu";
  static final String ROW_TO_GPU = "com.nvidia.spark.rapids.GpuRowToColumnarExec";

  private RapidsPlugin() {}

  /** The plugin's version from its jar, empty when the plugin is not on the class path. */
  static Optional<String> version() {
    Class<?> loader = shimLoaderClass();
    if (loader == null) {
      return Optional.empty();
    }
    try (InputStream in = loader.getClassLoader().getResourceAsStream("rapids4spark-version-info.properties")) {
      if (in == null) {
        return Optional.of("unknown");
      }
      Properties p = new Properties();
      p.load(in);
      return Optional.of(p.getProperty("version", "unknown"));
    } catch (IOException e) {
      return Optional.of("unknown");
    }
  }

  static boolean tested(String version) {
    return version.startsWith(TESTED_LINE);
  }

  /** A class of the plugin's SQL side, loaded the way the plugin loads it. */
  static Class<?> sqlClass(String name) {
    Class<?> loader = shimLoaderClass();
    if (loader == null) {
      throw new GpuDirectException("The RAPIDS Accelerator is not on this JVM's class path, yet a plan"
          + " handed it gpudirect's batches: put rapids-4-spark on every executor's class path", null);
    }
    try {
      ClassLoader shims = (ClassLoader) loader.getMethod("getShimClassLoader").invoke(null);
      return Class.forName(name, true, shims);
    } catch (ReflectiveOperationException e) {
      throw new GpuDirectException("Cannot load " + name + " from the RAPIDS Accelerator " + version().orElse("")
          + ": gpudirect's pass-through is tested with " + TESTED_LINE + "x only", e);
    }
  }

  private static Class<?> shimLoaderClass() {
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    for (ClassLoader l : new ClassLoader[] {context, RapidsPlugin.class.getClassLoader()}) {
      try {
        return Class.forName(SHIM_LOADER, false, l);
      } catch (ClassNotFoundException | NoClassDefFoundError | NullPointerException e) {
        // Not there: try the next loader.
      }
    }
    return null;
  }
}
