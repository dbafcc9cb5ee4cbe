package io.gpudirect.server;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.Consumer;

/** A {@link ListedDirectory} by path below a real root, as {@link RootDirectory} checks paths. */
final class PathDirectory implements ListedDirectory {
  private final Path root;
  private final Path dir;

  /** {@code dir}: a real path below (or at) {@code root}, a real path itself. */
  PathDirectory(Path root, Path dir) {
    this.root = root;
    this.dir = dir;
  }

  @Override
  public void names(Consumer<String> sink) throws IOException {
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      for (Path p : s) {
        sink.accept(p.getFileName().toString());
      }
    }
  }

  @Override
  public Entry look(String name) throws IOException {
    Path p = dir.resolve(name);
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (a.isSymbolicLink()) {
        // A link that leaves the root, or leads to a directory (cycles), is not listed.
        Path real = p.toRealPath();
        if (!real.startsWith(root)) {
          return null;
        }
        a = Files.readAttributes(real, BasicFileAttributes.class);
        return a.isRegularFile() ? file(a) : null;
      }
    } catch (NoSuchFileException e) {
      return null;
    }
    if (a.isDirectory()) {
      return new Entry(true, 0, a.lastModifiedTime().toMillis());
    }
    return a.isRegularFile() ? file(a) : null;
  }

  private static Entry file(BasicFileAttributes a) {
    return new Entry(false, a.size(), a.lastModifiedTime().toMillis());
  }

  @Override
  public ListedDirectory open(String name) {
    return new PathDirectory(root, dir.resolve(name));
  }

  @Override
  public void close() {
    // nothing held open between calls
  }
}
