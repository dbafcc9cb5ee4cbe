package io.gpudirect.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What a local user who may write below a server's root can do with renames over a name, as
 * fast as they go: put each of {@code entries} at {@code name} in turn, by a hard link to it
 * renamed over the name, so that the name never goes missing (as {@link RenameLoop}'s does) and
 * holds another inode each time, the way a map task run again renames its files over the old
 * ones. An entry may be a file, a symlink (linked, not followed) or a FIFO; the last one stays at
 * {@code name} when the loop stops. A round puts every entry at the name once.
 */
public final class RenameOverLoop extends AttackLoop {
  public RenameOverLoop(Path name, List<Path> entries) {
    super("rename-over-loop", renamesOver(name, List.copyOf(entries)));
  }

  private static Round renamesOver(Path name, List<Path> entries) {
    Path link = name.resolveSibling(name.getFileName() + ".renaming");
    return () -> {
      for (Path e : entries) {
        Files.createLink(link, e);
        Files.move(link, name, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      }
    };
  }
}
