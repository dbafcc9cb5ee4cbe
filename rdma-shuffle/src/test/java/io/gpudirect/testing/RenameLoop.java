package io.gpudirect.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a local user who may rename entries below a server's root can do to it: swap what one
 * name holds, back and forth, as fast as renames go. {@code name} first holds one entry,
 * {@code parked} the other (a directory and a symlink, a file and a FIFO); every round renames
 * each into {@code name} in turn, through a third name, {@code aside}.
 */
public final class RenameLoop implements AutoCloseable {
  private final Path name;
  private final Path parked;
  private final Path aside;
  private final Thread thread;
  private final AtomicLong swaps = new AtomicLong();
  private volatile boolean stop;
  private volatile Throwable failure;

  public RenameLoop(Path name, Path parked, Path aside) {
    this.name = name;
    this.parked = parked;
    this.aside = aside;
    this.thread = new Thread(this::run, "test-rename-loop");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    try {
      while (!stop) {
        move(name, aside);
        move(parked, name);
        move(name, parked);
        move(aside, name);
        swaps.incrementAndGet();
      }
    } catch (Throwable t) {
      failure = t;
    }
  }

  private static void move(Path from, Path to) {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Rounds done so far. */
  public long swaps() {
    return swaps.get();
  }

  /** Stops swapping, leaving {@code name} with what it held first; throws what the loop hit. */
  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join(10_000);
    if (failure != null) {
      throw new AssertionError("the rename loop failed", failure);
    }
  }
}
