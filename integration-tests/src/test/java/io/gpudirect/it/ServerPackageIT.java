package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server package as built: NOTICE names what its lib/ holds, and docs/deployment.md says what it is. */
class ServerPackageIT {
  private static final Path DEPLOYMENT = Path.of("..", "docs", "deployment.md");
  private static final List<String> COUNTS = List.of("zero", "one", "two", "three", "four", "five", "six", "seven",
      "eight", "nine", "ten", "eleven", "twelve");

  @TempDir Path dir;

  @Test
  void noticeNamesEveryThirdPartyJarInLib() throws Exception {
    BundledArtifacts.assertNoticeNamesAll("lib/ of " + BundledArtifacts.serverPackage(),
        BundledArtifacts.inLib(BundledArtifacts.unpackServerPackage(dir)));
  }

  /** Its size, and lib/'s jars (how many, which, how large), as deployment.md gives them, to 10%. */
  @Test
  void deploymentSaysWhatThePackageHolds() throws Exception {
    String doc = Files.readString(DEPLOYMENT, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    Matcher size = Pattern.compile("gpudirect-server-\\S+\\.tar\\.gz # about ([0-9.]+) MB").matcher(doc);
    assertTrue(size.find(), "the package's size in " + DEPLOYMENT);
    assertAbout(Double.parseDouble(size.group(1)), Files.size(BundledArtifacts.serverPackage()), "the package");

    Path lib = BundledArtifacts.unpackServerPackage(dir);
    Matcher said = Pattern.compile("`lib/` \\(the server module's jar with ([^:]+): (\\w+) jars, about ([0-9.]+) MB\\)")
        .matcher(doc);
    assertTrue(said.find(), "what lib/ holds, in " + DEPLOYMENT);
    List<Path> jars;
    try (Stream<Path> s = Files.list(lib)) {
      jars = s.sorted().toList();
    }
    assertEquals(COUNTS.get(jars.size()), said.group(2), "jars in lib/: " + jars);
    long bytes = 0;
    for (Path jar : jars) {
      bytes += Files.size(jar);
    }
    assertAbout(Double.parseDouble(said.group(3)), bytes, "lib/'s jars");
    TreeSet<String> names = BundledArtifacts.docNames(BundledArtifacts.inLib(lib));
    for (String name : names) {
      assertTrue(said.group(1).contains(name), DEPLOYMENT + " leaves " + name + " out of lib/: " + said.group(1));
    }
  }

  private static void assertAbout(double saidMb, long bytes, String what) {
    double mb = bytes / 1e6;
    assertTrue(Math.abs(saidMb - mb) <= 0.1 * mb, String.format("%s: %s says about %s MB, it is %.2f MB",
        what, DEPLOYMENT, saidMb, mb));
  }
}
