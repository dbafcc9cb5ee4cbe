package io.gpudirect.cli;

import java.nio.charset.StandardCharsets;

/**
 * Text from a server, made safe to print to a terminal: a file name can hold any character but
 * '/' and NUL. Control characters written raw move the cursor, clear the screen or retitle the
 * terminal (ESC sequences); Unicode's direction overrides and isolates reorder what follows them
 * (bidi, U+202E, gnp.exe shows as bidiexe.png), and its other format characters
 * (zero-width spaces and joiners, direction marks, tags) and line separators hide or break what
 * is shown. Escaped as GNU {@code ls -b} escapes control characters: C escapes ({@code \n},
 * {@code \t}, {@code \a}, ...), the others (C0, DEL, C1, and the format characters and
 * separators) as the octal of their UTF-8 bytes ({@code \033} for ESC, {@code \342\200\256} for
 * U+202E), a backslash doubled, so the output is unambiguous. Everything else, non-ASCII letters
 * included, is printed as it is.
 */
final class TerminalText {
  private TerminalText() {}

  static String escape(String s) {
    StringBuilder out = null;
    for (int i = 0; i < s.length(); ) {
      int c = s.codePointAt(i);
      int next = i + Character.charCount(c);
      String e = escapeOf(c);
      if (e == null) {
        if (out != null) {
          out.append(s, i, next);
        }
      } else {
        if (out == null) {
          out = new StringBuilder(s.length() + 8).append(s, 0, i);
        }
        out.append(e);
      }
      i = next;
    }
    return out == null ? s : out.toString();
  }

  private static String escapeOf(int c) {
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
    if (!invisible(c)) {
      return null;
    }
    StringBuilder octal = new StringBuilder();
    for (byte b : new String(Character.toChars(c)).getBytes(StandardCharsets.UTF_8)) {
      octal.append(String.format("\\%03o", b & 0xff));
    }
    return octal.toString();
  }

  /**
   * Control characters, format characters (Unicode category Cf: U+200B to U+200F, U+202A to
   * U+202E, U+2060 to U+2069, U+FEFF, the tags, ...) and the line and paragraph separators.
   */
  private static boolean invisible(int c) {
    if (Character.isISOControl(c)) {
      return true;
    }
    int type = Character.getType(c);
    return type == Character.FORMAT || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR;
  }
}
