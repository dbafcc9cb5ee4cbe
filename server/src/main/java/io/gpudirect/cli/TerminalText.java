package io.gpudirect.cli;

import java.nio.charset.StandardCharsets;

/**
 * Text from a server, made safe to print to a terminal: a file name can hold any character but
 * '/' and NUL, and control characters written raw move the cursor, clear the screen or retitle
 * the terminal (ESC sequences). Escaped as GNU {@code ls -b} does: C escapes ({@code \n},
 * {@code \t}, {@code \a}, ...), other control characters (C0, DEL, C1) as the octal of their
 * UTF-8 bytes ({@code \033} for ESC), a backslash doubled, so the output is unambiguous.
 * Everything else, non-ASCII letters included, is printed as it is.
 */
final class TerminalText {
  private TerminalText() {}

  static String escape(String s) {
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      String e = escapeOf(c);
      if (e == null) {
        if (out != null) {
          out.append(c);
        }
        continue;
      }
      if (out == null) {
        out = new StringBuilder(s.length() + 8).append(s, 0, i);
      }
      out.append(e);
    }
    return out == null ? s : out.toString();
  }

  private static String escapeOf(char c) {
    switch (c) {
      case '\\':
        return "\\\\";
      case 0x07:
        return "\\a";
      case '\b':
        return "\\b";
      case '\t':
        return "\\t";
      case '\n':
        return "\\n";
      case 0x0b:
        return "\\v";
      case '\f':
        return "\\f";
      case '\r':
        return "\\r";
      default:
        break;
    }
    if (!Character.isISOControl(c)) {
      return null;
    }
    StringBuilder octal = new StringBuilder();
    for (byte b : String.valueOf(c).getBytes(StandardCharsets.UTF_8)) {
      octal.append(String.format("\\%03o", b & 0xff));
    }
    return octal.toString();
  }
}
