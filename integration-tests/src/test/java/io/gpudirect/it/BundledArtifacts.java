package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The third-party artifacts a shipped file holds, by Maven coordinates (group:artifact): the
 * shaded jar's, read from the {@code META-INF/maven} of each artifact shaded in; the server
 * package's, one per jar in its {@code lib/}. What NOTICE and the docs must name.
 */
final class BundledArtifacts {
  private static final Pattern POM_PROPERTIES = Pattern.compile("META-INF/maven/([^/]+)/([^/]+)/pom\\.properties");
  /** A jar's file name without its version: picocli ships no pom.properties. */
  private static final Pattern JAR_NAME = Pattern.compile("(.+?)-\\d[^/]*\\.jar");
  /** The name the docs give each artifact, by the start of its coordinates. */
  private static final Map<String, String> DOC_NAMES = Map.of(
      "com.ibm.disni:", "DiSNI", "org.openucx:", "jucx", "org.jcuda:", "jcuda", "info.picocli:", "picocli",
      "org.slf4j:", "SLF4J");

  private BundledArtifacts() {}

  /** The group:artifact of everything not gpudirect's own that {@code jar} holds. */
  static TreeSet<String> inJar(JarFile jar) {
    TreeSet<String> found = new TreeSet<>();
    jar.stream().map(JarEntry::getName).map(POM_PROPERTIES::matcher).filter(Matcher::matches)
        .map(m -> m.group(1) + ":" + m.group(2)).filter(c -> !c.startsWith("io.gpudirect:")).forEach(found::add);
    return found;
  }

  /** The server package, unpacked below {@code dir}; returns its lib/ folder. */
  static Path unpackServerPackage(Path dir) throws IOException, InterruptedException {
    Path tarball = serverPackage();
    Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", dir.toString())
        .redirectErrorStream(true).start();
    assertTrue(tar.waitFor(60, TimeUnit.SECONDS) && tar.exitValue() == 0,
        new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    try (Stream<Path> top = Files.list(dir)) {
      return top.findFirst().orElseThrow().resolve("lib");
    }
  }

  static Path serverPackage() {
    Path tarball = Path.of(System.getProperty("gpudirect.serverPackage"));
    assertTrue(Files.isRegularFile(tarball), "the server package is built by the server module: " + tarball);
    return tarball;
  }

  /**
   * The group:artifact of each third-party jar in {@code lib}; a jar without Maven's metadata as
   * {@code ?:artifact}, its artifact from the file name.
   */
  static TreeSet<String> inLib(Path lib) throws IOException {
    TreeSet<String> found = new TreeSet<>();
    try (Stream<Path> jars = Files.list(lib)) {
      for (Path jar : jars.sorted().toList()) {
        try (JarFile j = new JarFile(jar.toFile())) {
          List<String> own = j.stream().map(JarEntry::getName).map(POM_PROPERTIES::matcher).filter(Matcher::matches)
              .map(m -> m.group(1) + ":" + m.group(2)).toList();
          if (own.isEmpty()) {
            Matcher name = JAR_NAME.matcher(jar.getFileName().toString());
            assertTrue(name.matches(), "a jar name with a version: " + jar);
            found.add("?:" + name.group(1));
          } else if (!own.get(0).startsWith("io.gpudirect:")) {
            found.add(own.get(0));
          }
        }
      }
    }
    return found;
  }

  /** The artifacts NOTICE does not name: by coordinates, or by artifact where the jar gave no group. */
  static List<String> missingFromNotice(TreeSet<String> bundled) throws IOException {
    String notice = Files.readString(Path.of("..", "NOTICE"), StandardCharsets.UTF_8);
    List<String> missing = new ArrayList<>();
    for (String coordinates : bundled) {
      boolean named = coordinates.startsWith("?:")
          ? Pattern.compile("[\\w.-]+:" + Pattern.quote(coordinates.substring(2)) + "\\b").matcher(notice).find()
          : notice.contains(coordinates);
      if (!named) {
        missing.add(coordinates);
      }
    }
    return missing;
  }

  /** The names the docs give {@code bundled}, one per artifact family. */
  static TreeSet<String> docNames(TreeSet<String> bundled) {
    TreeSet<String> names = new TreeSet<>();
    for (String coordinates : bundled) {
      String name = DOC_NAMES.entrySet().stream()
          .filter(e -> coordinates.startsWith(e.getKey()) || coordinates.equals("?:" + e.getValue()))
          .map(Map.Entry::getValue).findFirst().orElse(null);
      assertTrue(name != null, coordinates + " is bundled: give it the name the docs use, in DOC_NAMES");
      names.add(name);
    }
    return names;
  }

  static void assertNoticeNamesAll(String what, TreeSet<String> bundled) throws IOException {
    assertEquals(List.of(), missingFromNotice(bundled), what + " holds these, which NOTICE does not name"
        + " (by group:artifact, with their license); bundled: " + bundled);
  }
}
