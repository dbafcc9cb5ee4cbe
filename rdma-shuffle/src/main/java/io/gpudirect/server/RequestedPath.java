package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A path as a request named it, taken apart into the names below the root that it stands for:
 * normalised lexically, refused if it climbs out. Each name is one directory entry (no
 * separator, never {@code .} or {@code ..}), so a directory opened below the root can look it
 * up by itself, with no path walk left to the kernel.
 */
record RequestedPath(String requested, List<String> names) {
  /**
   * How this JVM turns file names into bytes: {@code sun.jnu.encoding}, which follows the
   * locale the server was started in ({@code -Dfile.encoding} does not change it). Under
   * {@code LANG=C} it is ASCII, and no name with another character can be named or listed.
   */
  static final Charset FILE_NAMES = fileNames();

  static RequestedPath of(String requested) {
    if (requested.indexOf('\0') >= 0) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST,
          "Path " + show(requested) + " contains a NUL byte");
    }
    String p = requested.startsWith("/") ? requested.substring(1) : requested;
    if (p.startsWith("/")) {
      throw new RequestRefusedException(ErrorCode.OUTSIDE_ROOT, "Path " + show(requested)
          + " is absolute; paths are relative to the server root (one leading '/' means the root)");
    }
    List<String> names = new ArrayList<>();
    for (String segment : p.split("/")) {
      if (segment.isEmpty() || segment.equals(".")) {
        continue;
      }
      if (segment.equals("..")) {
        if (names.isEmpty()) {
          throw new RequestRefusedException(ErrorCode.OUTSIDE_ROOT,
              "Path " + show(requested) + " climbs above the server root with '..'");
        }
        names.remove(names.size() - 1);
      } else {
        if (!representable(segment)) {
          throw unrepresentable("Path " + show(requested), segment);
        }
        names.add(segment);
      }
    }
    return new RequestedPath(requested, List.copyOf(names));
  }

  private static Charset fileNames() {
    try {
      return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
    } catch (IllegalArgumentException unknown) {
      return StandardCharsets.UTF_8;
    }
  }

  /** The names joined with '/': the same file always has the same one. */
  String normalized() {
    return String.join("/", names);
  }

  /** The normalised path of the first {@code n} names, for messages. */
  String prefix(int n) {
    return String.join("/", names.subList(0, n));
  }

  boolean isRoot() {
    return names.isEmpty();
  }

  /** The last name, the one the walk does not open as a directory. */
  Path last() {
    return Path.of(names.get(names.size() - 1));
  }

  /** Whether {@code name} survives the trip to bytes and back in this JVM's file-name encoding. */
  static boolean representable(String name) {
    if (FILE_NAMES.equals(StandardCharsets.UTF_8)) {
      return true;
    }
    return FILE_NAMES.newEncoder().canEncode(name) && name.indexOf('\uFFFD') < 0;
  }

  /** The error for a name this JVM cannot turn into bytes (or that it decoded lossily). */
  static RequestRefusedException unrepresentable(String what, String name) {
    return new RequestRefusedException(ErrorCode.IO_ERROR, what + ": the name " + show(name)
        + " cannot be represented in the server's file-name encoding " + FILE_NAMES
        + " (from its locale); run the server with a UTF-8 locale (LC_ALL=C.UTF-8)");
  }

  /** A path as a request named it, quoted and with control characters escaped, for errors. */
  static String show(String requested) {
    StringBuilder sb = new StringBuilder("'");
    for (int i = 0; i < requested.length() && i < 512; i++) {
      char c = requested.charAt(i);
      sb.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
    }
    return sb.append(requested.length() > 512 ? "…'" : "'").toString();
  }
}
