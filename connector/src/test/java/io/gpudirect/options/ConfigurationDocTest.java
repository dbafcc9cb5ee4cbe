package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/configuration.md and the code list the same options, session keys and defaults. */
class ConfigurationDocTest {
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `([^`]+)` \\| ([^|]+) \\|", Pattern.MULTILINE);

  @Test
  void docListsEveryOptionWithItsSessionKeyAndDefault() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
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
}
