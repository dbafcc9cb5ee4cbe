package io.gpudirect.verbs.ucx;

import io.gpudirect.testing.ChildProcess;
import java.util.List;

/**
 * A Java program of these tests in a process of its own: what the fuzz tests attack runs there,
 * so that a crash in native code (UCX) fails the test with the process's exit code and last lines
 * instead of taking the build's JVM down.
 */
final class ChildJvm {
  private ChildJvm() {}

  static ChildProcess start(Class<?> main, String... args) {
    return ChildProcess.start("child JVM",
        ChildProcess.java(main, List.of("-Xmx512m", "-XX:MaxDirectMemorySize=1g"), main.getName(), args));
  }
}
