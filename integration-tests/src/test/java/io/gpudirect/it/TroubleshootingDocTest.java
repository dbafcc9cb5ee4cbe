package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/troubleshooting.md heads each entry with a part of a message, in backquotes: each must
 * still be in some module's main sources, word for word, so a message reworded or removed fails
 * here until the page follows. Entries for Spark's and Hadoop's own messages ("### Spark: ...")
 * are not ours to check.
 */
class TroubleshootingDocTest {
  private static final Path ROOT = Path.of("..");
  private static final Path DOC = ROOT.resolve("docs/troubleshooting.md");
  private static final Pattern QUOTED = Pattern.compile("(?m)^### `([^`]+)`$");

  @Test
  void everyMessageItQuotesIsStillInTheSources() throws IOException {
    String sources = mainSources();
    List<String> quoted = new ArrayList<>();
    Matcher m = QUOTED.matcher(Files.readString(DOC, StandardCharsets.UTF_8));
    while (m.find()) {
      quoted.add(m.group(1));
    }
    assertTrue(quoted.size() >= 40, "messages quoted: " + quoted);
    assertEquals(List.of(), quoted.stream().filter(q -> !sources.contains(q)).toList(),
        "quoted in " + DOC + " but in no module's src/main/java: reword the entry as the message now reads");
  }

  @Test
  void readmeAndTheOtherDocsLeadToIt() throws IOException {
    assertTrue(Files.readString(ROOT.resolve("README.md")).contains("(docs/troubleshooting.md)"), "README links it");
    for (String doc : List.of("quickstart.md", "deployment.md", "configuration.md")) {
      assertTrue(Files.readString(ROOT.resolve("docs").resolve(doc)).contains("(troubleshooting.md)"), doc + " links it");
    }
  }

  /** Every module's main Java sources, one text. */
  private static String mainSources() throws IOException {
    List<Path> dirs;
    try (Stream<Path> modules = Files.list(ROOT)) {
      dirs = modules.map(p -> p.resolve("src/main/java")).filter(Files::isDirectory).toList();
    }
    assertTrue(dirs.size() >= 5, "modules found: " + dirs);
    StringBuilder all = new StringBuilder();
    for (Path dir : dirs) {
      try (Stream<Path> files = Files.walk(dir)) {
        all.append(files.filter(p -> p.toString().endsWith(".java")).map(TroubleshootingDocTest::read)
            .collect(Collectors.joining("\n")));
      }
    }
    return all.toString();
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
