package io.gpudirect.testing;

import java.nio.file.Path;

/**
 * Where ../shared/testdata is: the poms pass it as {@code gpudirect.testdata}; a test run from
 * a module directory without them finds it two levels up. On the GPU machine the lab's runs
 * set the property to the copy they carried.
 */
public final class TestData {
  private TestData() {}

  /** The testdata directory, absolute. */
  public static Path root() {
    return Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata")).toAbsolutePath();
  }
}
