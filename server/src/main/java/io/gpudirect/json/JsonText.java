package io.gpudirect.json;

/**
 * JSON string literals for the CLI's {@code --json} output ({@code doctor}, {@code bench}):
 * the few lines of JSON they print do not warrant a JSON library on the CLI's classpath.
 */
public final class JsonText {
  private JsonText() {}

  /** {@code s} as a JSON string, escaped; {@code null} as the JSON literal null. */
  public static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
