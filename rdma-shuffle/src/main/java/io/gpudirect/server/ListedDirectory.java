package io.gpudirect.server;

import io.gpudirect.protocol.FileVersion;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * What a {@link DirectoryWalk} needs of a directory below the server root: its names, a look at
 * one of them, and a way into a subdirectory. The walk sees nothing else of the file system, so
 * how directories are opened and checked is the provider's business: {@link RootDirectory}'s,
 * which holds each one open below the root and follows no symlink.
 */
interface ListedDirectory extends AutoCloseable {
  /** Reads the directory and gives every name in it to {@code sink}, in no order; once. */
  void names(Consumer<String> sink) throws IOException;

  /**
   * What {@code name} is, as a listing shows it: a regular file, a directory to walk, or null
   * for anything else: gone, a symlink (never followed, wherever it leads), a FIFO, socket or
   * device.
   */
  Entry look(String name) throws IOException;

  /** The subdirectory {@code name}, which {@link #look} found to be a directory. */
  ListedDirectory open(String name) throws IOException;

  @Override
  void close() throws IOException;

  /**
   * A file ({@code directory} false, with its size, modification time and version, all from the
   * one look) or a directory ({@link FileVersion#ANY}).
   */
  record Entry(boolean directory, long size, long modifiedMillis, FileVersion version) {}
}
