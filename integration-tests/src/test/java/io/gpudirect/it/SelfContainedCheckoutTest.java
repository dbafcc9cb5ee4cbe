package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.TestData;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A fresh clone passes its tests: no source, pom or script reads a folder beside the checkout
 * (the lab's shared test data once lived there, and a clone elsewhere failed 20 tests). Test
 * data is the repository's own {@code testdata/}. Only the GPU lab's staging, developer tooling
 * under {@code dev/}, may name the lab's scripts beside the checkout.
 */
class SelfContainedCheckoutTest {
  // Spelled in two parts so that this file does not match itself.
  private static final String BESIDE = ".." + "/shared";
  private static final String SHARED_DATA = "shared" + "/testdata";
  private static final String LAB_TOOLING = BESIDE + "/gpu-lab/";

  @Test
  void noSourcePomOrScriptReadsOutsideTheRepository() throws IOException {
    Path repo = TestData.repository();
    List<String> found = new ArrayList<>();
    for (Path file : checked(repo)) {
      String rel = repo.relativize(file).toString().replace('\\', '/');
      List<String> lines;
      try {
        lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      } catch (MalformedInputException binary) {
        continue;
      }
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        boolean labTooling = rel.startsWith("dev/") && line.replace(LAB_TOOLING, "").indexOf(BESIDE) < 0;
        if (line.contains(SHARED_DATA) || (line.contains(BESIDE) && !labTooling)) {
          found.add(rel + ":" + (i + 1) + ": " + line.strip());
        }
      }
    }
    assertTrue(found.isEmpty(), "read testdata/ through io.gpudirect.testing.TestData instead of a folder"
        + " beside the checkout:\n" + String.join("\n", found));
  }

  @Test
  void theCheckIsLookingAtTheRealTree() throws IOException {
    Path repo = TestData.repository();
    List<Path> files = checked(repo);
    assertTrue(files.contains(repo.resolve("bin/gpudirect")), "bin/gpudirect is checked: " + files.size() + " files");
    assertTrue(files.contains(repo.resolve("pom.xml")), "the parent pom is checked");
    assertTrue(files.stream().anyMatch(f -> f.endsWith("TestData.java")), "gpu-memory's test sources are checked");
  }

  /** The poms, every module's sources and the scripts of bin/, dev/ and .ci/. */
  private static List<Path> checked(Path repo) throws IOException {
    try (Stream<Path> all = Files.walk(repo)) {
      return all.filter(Files::isRegularFile).filter(f -> {
        String rel = repo.relativize(f).toString().replace('\\', '/');
        return !rel.contains("/target/") && !rel.startsWith(".git")
            && (rel.endsWith("pom.xml") || rel.contains("/src/")
                || rel.startsWith("bin/") || rel.startsWith("dev/") || rel.startsWith(".ci/"));
      }).toList();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }
}
