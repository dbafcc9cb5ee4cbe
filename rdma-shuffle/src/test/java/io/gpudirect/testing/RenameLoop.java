package io.gpudirect.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * What a local user who may rename entries below a server's root can do to a name, as fast as
 * renames go: put each of {@code entries} at {@code name} in turn, parking the one it held at its
 * own name meanwhile. This works for any entry, a directory included (which no rename can replace
 * in one step, as {@link RenameOverLoop} replaces a file), and the name goes missing between the
 * two renames of each step. The name first holds what the first entry names (which must not
 * exist yet), and holds it again when stopped; an entry may come more than once. A round puts
 * every entry at the name once.
 */
public final class RenameLoop extends AttackLoop {
  /**
   * Swaps what {@code name} holds, back and forth: it first holds one entry, {@code parked} the
   * other (a directory and a symlink, a file and a FIFO); each round renames each into {@code
   * name} in turn, through a third name, {@code aside}.
   */
  public RenameLoop(Path name, Path parked, Path aside) {
    this(name, List.of(aside, parked));
  }

  public RenameLoop(Path name, List<Path> entries) {
    super("rename-loop", rotation(name, List.copyOf(entries)));
  }

  private static Round rotation(Path name, List<Path> entries) {
    return () -> {
      for (int i = 0; i < entries.size(); i++) {
        Files.move(name, entries.get(i), StandardCopyOption.ATOMIC_MOVE);
        Files.move(entries.get((i + 1) % entries.size()), name, StandardCopyOption.ATOMIC_MOVE);
      }
    };
  }
}
