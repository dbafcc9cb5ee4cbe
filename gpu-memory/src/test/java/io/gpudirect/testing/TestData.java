package io.gpudirect.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the repository's {@code testdata/} is, for the tests of every module. Surefire runs a
 * module's tests in the module's directory, an IDE may run them in the repository root: either
 * way the directory that holds both {@code testdata/} and the parent {@code pom.xml} is found by
 * walking up from the working directory, so a checkout needs nothing beside it. The property
 * {@code gpudirect.testdata} overrides it, for runs with the files elsewhere (the GPU lab carries
 * a copy along with the test classes).
 */
public final class TestData {
  private TestData() {}

  /** The testdata directory, absolute. */
  public static Path root() {
    String override = System.getProperty("gpudirect.testdata");
    if (override != null && !override.isBlank()) {
      return Path.of(override).toAbsolutePath().normalize();
    }
    return repository().resolve("testdata");
  }

  /** The checkout the tests run in: its root holds {@code testdata/} and the parent pom. */
  public static Path repository() {
    return repository(Path.of(System.getProperty("user.dir")));
  }

  static Path repository(Path start) {
    for (Path dir = start.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
      if (Files.isDirectory(dir.resolve("testdata")) && Files.isRegularFile(dir.resolve("pom.xml"))) {
        return dir;
      }
    }
    throw new IllegalStateException("No testdata/ beside a pom.xml in " + start.toAbsolutePath()
        + " or any directory above it: run the tests from a gpudirect checkout, or set -Dgpudirect.testdata=DIR");
  }

  /** {@code testdata/dir}, e.g. {@code "parquet"}, {@code "arrow"} or {@code "malformed"}. */
  public static Path dir(String dir) {
    return root().resolve(dir);
  }
}
