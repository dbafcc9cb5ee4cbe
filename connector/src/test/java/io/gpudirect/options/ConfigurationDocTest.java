package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.gpu.GpuSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/configuration.md and the code list the same options, session keys and defaults. */
class ConfigurationDocTest {
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `([^`]+)` \\| ([^|]+) \\|", Pattern.MULTILINE);
  private static final Pattern EXECUTOR_ROW = Pattern.compile("^\\| `spark\\.gpudirect\\.([^`]+)` \\| ([^|]+) \\|", Pattern.MULTILINE);
  private static final String EXECUTOR_SECTION = "## Executor settings";
  private static final Path DOC = Path.of("..", "docs", "configuration.md");

  @Test
  void docListsEveryOptionWithItsSessionKeyAndDefault() throws Exception {
    String doc = readOptions();
    Map<String, String> documented = new LinkedHashMap<>();
    Matcher m = ROW.matcher(doc);
    while (m.find()) {
      assertEquals("spark.gpudirect." + m.group(1), m.group(2), "session key of " + m.group(1));
      documented.put(m.group(1), m.group(3).trim());
    }
    Map<String, String> inCode = new LinkedHashMap<>();
    Arrays.stream(GpuDirectOption.values()).forEach(o -> inCode.put(o.key(),
        o.defaultValue().isEmpty() ? "(none)" : "`" + o.defaultValue() + "`"));
    // Options whose default is computed say how, in parentheses.
    documented.replaceAll((k, v) -> v.startsWith("(") ? "(none)" : v);
    assertEquals(inCode, documented);
  }

  @Test
  void docListsEveryExecutorSettingWithItsDefault() throws Exception {
    String doc = Files.readString(DOC);
    String section = doc.substring(doc.indexOf(EXECUTOR_SECTION));
    // To the next section: the shuffle's settings, under spark.gpudirect.shuffle., are not executor settings.
    Matcher m = EXECUTOR_ROW.matcher(section.substring(0, section.indexOf("\n## ")));
    Map<String, String> documented = new LinkedHashMap<>();
    while (m.find()) {
      documented.put(m.group(1), m.group(2).trim());
    }
    assertEquals(ExecutorSettings.NAMES, List.copyOf(documented.keySet()));
    GpuSettings defaults = GpuSettings.DEFAULTS;
    assertEquals("`" + defaults.pinnedChunks() + "`", documented.get(GpuSettings.PINNED_CHUNKS));
    assertEquals("`" + defaults.prefetchFraction() + "`", documented.get(GpuSettings.PREFETCH_FRACTION));
    assertEquals("unlimited", documented.get(GpuSettings.DEVICE_MEMORY_LIMIT));
  }

  /** The options' part of the page: executor settings have a table of their own. */
  private static String readOptions() throws Exception {
    String doc = Files.readString(DOC);
    return doc.substring(0, doc.indexOf(EXECUTOR_SECTION));
  }
}
