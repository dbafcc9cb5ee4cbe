package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.FileVersion;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;

/**
 * The directory a server exposes, read-only. Every requested path is normalised lexically,
 * must stay below the root, and must still be below the root after symlinks are resolved
 * (checked on the real path), so nothing outside the root can be named, listed or read.
 */
final class RootDirectory {
  /** A listing larger than this is refused rather than held in memory. */
  static final int MAX_LIST_ENTRIES = 1_000_000;

  private final Path root;

  RootDirectory(Path root) throws IOException {
    this.root = root.toRealPath();
    if (!Files.isDirectory(this.root)) {
      throw new IOException("Server root " + root + " is not a directory");
    }
  }

  Path path() {
    return root;
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

  /** The real path of an existing file or directory below the root. */
  Path resolve(String requested) {
    return real(requested, candidate(parts(requested)));
  }

  /** The requested path's names below the root, normalised lexically; refused if it climbs out. */
  private static Deque<String> parts(String requested) {
    if (requested.indexOf('\0') >= 0) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST,
          "Path " + show(requested) + " contains a NUL byte");
    }
    String p = requested.startsWith("/") ? requested.substring(1) : requested;
    if (p.startsWith("/")) {
      throw new RequestRefusedException(ErrorCode.OUTSIDE_ROOT, "Path " + show(requested)
          + " is absolute; paths are relative to the server root (one leading '/' means the root)");
    }
    Deque<String> parts = new ArrayDeque<>();
    for (String segment : p.split("/")) {
      if (segment.isEmpty() || segment.equals(".")) {
        continue;
      }
      if (segment.equals("..")) {
        if (parts.isEmpty()) {
          throw new RequestRefusedException(ErrorCode.OUTSIDE_ROOT,
              "Path " + show(requested) + " climbs above the server root with '..'");
        }
        parts.removeLast();
      } else {
        parts.addLast(segment);
      }
    }
    return parts;
  }

  private Path candidate(Deque<String> parts) {
    Path candidate = root;
    for (String part : parts) {
      candidate = candidate.resolve(part);
    }
    return candidate;
  }

  /** The real path of {@code candidate}, which must exist and stay below the root. */
  private Path real(String requested, Path candidate) {
    Path real;
    try {
      real = candidate.toRealPath();
    } catch (IOException e) {
      // Only now, on the way to an error, is it worth an lstat to say which error: every
      // request pays for the realpath above, a file that is not there pays for this too.
      if (!Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) {
        throw new RequestRefusedException(ErrorCode.NOT_FOUND, "No such file or directory: "
            + show(requested) + " (paths are relative to the server root)");
      }
      if (e instanceof NoSuchFileException) {
        throw new RequestRefusedException(ErrorCode.NOT_FOUND,
            "Path " + show(requested) + " is a symlink to a missing target", e);
      }
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot resolve " + show(requested) + ": " + e.getMessage(), e);
    }
    if (!real.startsWith(root)) {
      throw new RequestRefusedException(ErrorCode.OUTSIDE_ROOT, "Path " + show(requested)
          + " resolves outside the server root (through a symlink); refused");
    }
    return real;
  }

  /** The real path of a regular file below the root; FIFOs, devices and directories refused. */
  Path regularFile(String requested) {
    return checkedFile(requested).path();
  }

  /**
   * A regular file below the root, with its attributes as read in the same check (one
   * {@code lstat} of the real path: the size and the file key come with it, so a reader of
   * the file needs no second look).
   */
  CheckedFile checkedFile(String requested) {
    Deque<String> parts = parts(requested);
    CheckedFile plain = withoutLinks(parts);
    if (plain != null) {
      return plain;
    }
    Path real = real(requested, candidate(parts));
    BasicFileAttributes a;
    try {
      // The real path has no links left; one that has appeared since is not followed.
      a = Files.readAttributes(real, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      throw new RequestRefusedException(ErrorCode.NOT_FOUND, "No such file or directory: "
          + show(requested) + " (it went away while being checked)", e);
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot stat " + show(requested) + ": " + e.getMessage(), e);
    }
    if (!a.isRegularFile()) {
      throw notAFile(requested, real);
    }
    return new CheckedFile(real, a);
  }

  /**
   * The file, when no name on the way to it below the root is a symlink: one {@code lstat}
   * per name, every one but the last a directory, the last a regular file. The root is a real
   * path and nothing below it is a link, so the lexical path is the real one and it is inside
   * the root; {@code realpath} (a {@code readlink} per name of the whole absolute path, root
   * included) and a second {@code stat} are not needed. That was the largest cost of a 4 KiB
   * read on the server (docs/benchmarks.md). Null for anything else (a link, a missing name, a
   * directory or a device): {@link #checkedFile} then takes the general way, which says what
   * is wrong.
   */
  private CheckedFile withoutLinks(Deque<String> parts) {
    Path p = root;
    BasicFileAttributes a = null;
    int left = parts.size();
    for (String part : parts) {
      p = p.resolve(part);
      try {
        a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException e) {
        return null;
      }
      if (--left > 0 ? !a.isDirectory() : !a.isRegularFile()) {
        return null;
      }
    }
    return a == null ? null : new CheckedFile(p, a);
  }

  /** A regular file as {@link #checkedFile} found it: its real path and its attributes then. */
  record CheckedFile(Path path, BasicFileAttributes attributes) {}

  FileMeta stat(String requested) {
    Path real = resolve(requested);
    BasicFileAttributes a = attributes(requested, real);
    if (!a.isRegularFile() && !a.isDirectory()) {
      throw notAFile(requested, real);
    }
    return meta(real, a);
  }

  /** Every regular file below {@code requested}, sorted by path; just the file for a file. */
  List<FileMeta> list(String requested) {
    Path start = resolve(requested);
    BasicFileAttributes startAttrs = attributes(requested, start);
    if (startAttrs.isRegularFile()) {
      return List.of(meta(start, startAttrs));
    }
    if (!startAttrs.isDirectory()) {
      throw notAFile(requested, start);
    }
    List<FileMeta> out = new ArrayList<>();
    try {
      Files.walkFileTree(start, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          BasicFileAttributes a = attrs;
          if (attrs.isSymbolicLink()) {
            Path real;
            try {
              real = file.toRealPath();
            } catch (IOException e) {
              return FileVisitResult.CONTINUE;
            }
            // A link that leaves the root, or leads to a directory (cycles), is not listed.
            if (!real.startsWith(root)) {
              return FileVisitResult.CONTINUE;
            }
            a = Files.readAttributes(real, BasicFileAttributes.class);
          }
          if (a.isRegularFile()) {
            if (out.size() >= MAX_LIST_ENTRIES) {
              throw new RequestRefusedException(ErrorCode.LIMIT_EXCEEDED, "Listing "
                  + show(requested) + " has more than " + MAX_LIST_ENTRIES + " files");
            }
            out.add(new FileMeta(relative(file), a.size(), a.lastModifiedTime().toMillis(), false,
                FileVersion.of(a)));
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException exc) {
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot list " + show(requested) + ": " + e.getMessage(), e);
    }
    out.sort(Comparator.comparing(FileMeta::path));
    return out;
  }

  private FileMeta meta(Path real, BasicFileAttributes a) {
    return new FileMeta(relative(real), a.isDirectory() ? 0 : a.size(),
        a.lastModifiedTime().toMillis(), a.isDirectory(),
        a.isDirectory() ? FileVersion.ANY : FileVersion.of(a));
  }

  private String relative(Path p) {
    return root.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/");
  }

  private static BasicFileAttributes attributes(String requested, Path real) {
    try {
      return Files.readAttributes(real, BasicFileAttributes.class);
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot stat " + show(requested) + ": " + e.getMessage(), e);
    }
  }

  private static RequestRefusedException notAFile(String requested, Path real) {
    String what = Files.isDirectory(real) ? "a directory"
        : "not a regular file (a FIFO, socket or device)";
    return new RequestRefusedException(ErrorCode.NOT_A_FILE,
        "Path " + show(requested) + " is " + what + "; only regular files can be read");
  }
}
