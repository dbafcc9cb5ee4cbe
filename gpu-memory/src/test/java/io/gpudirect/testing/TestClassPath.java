package io.gpudirect.testing;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The class path a test's child JVM needs: {@code java.class.path}, plus what a launcher loaded
 * the tests through with a class loader of its own (JUnit's console launcher, as on the GPU lab,
 * puts only itself on {@code java.class.path}; a child started with that alone finds no classes).
 */
public final class TestClassPath {
  private TestClassPath() {}

  /** The class path that loaded {@code test}, for {@code java -cp}. */
  public static String of(Class<?> test) {
    Set<String> entries = new LinkedHashSet<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
    for (ClassLoader l = test.getClassLoader(); l != null; l = l.getParent()) {
      if (l instanceof URLClassLoader urls) {
        for (URL url : urls.getURLs()) {
          try {
            entries.add(Path.of(url.toURI()).toString());
          } catch (URISyntaxException | IllegalArgumentException | java.nio.file.FileSystemNotFoundException notAFile) {
            // not a local file: the child could not use it either
          }
        }
      }
    }
    return String.join(File.pathSeparator, entries);
  }
}
