package io.gpudirect.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a local user who may write below a server's root can do with renames over a name, as
 * fast as they go: put each of {@code entries} at {@code name} in turn, by a hard link to it
 * renamed over the name, so that the name never goes missing (as {@link RenameLoop}'s does) and
 * holds another inode each time, the way a map task run again renames its files over the old
 * ones. An entry may be a file, a symlink (linked, not followed) or a FIFO; the last one stays at
 * {@code name} when the loop stops.
 */
public final class RenameOverLoop implements AutoCloseable {
  private final Path name;
  private final List<Path> entries;
  private final Path link;
  private final Thread thread;
  private final AtomicLong rounds = new AtomicLong();
  private volatile boolean stop;
  private volatile Throwable failure;

  public RenameOverLoop(Path name, List<Path> entries) {
    this.name = name;
    this.entries = List.copyOf(entries);
    this.link = name.resolveSibling(name.getFileName() + ".renaming");
    this.thread = new Thread(this::run, "test-rename-over-loop");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    try {
      while (!stop) {
        for (Path e : entries) {
          Files.createLink(link, e);
          Files.move(link, name, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        rounds.incrementAndGet();
      }
    } catch (IOException e) {
      failure = new UncheckedIOException(e);
    } catch (Throwable t) {
      failure = t;
    }
  }

  /** Rounds done so far: each put every entry at the name once. */
  public long rounds() {
    return rounds.get();
  }

  /** Stops, leaving the last entry at the name; throws what the loop hit. */
  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join(10_000);
    if (failure != null) {
      throw new AssertionError("the rename-over loop failed", failure);
    }
  }
}
