package io.gpudirect.server;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * What a {@link DirectoryWalk} needs of a directory below the server root: its names, a look at
 * one of them, and a way into a subdirectory. The walk sees nothing else of the file system, so
 * how directories are opened and checked (paths, or handles held open) is the provider's
 * business, here {@link RootDirectory}'s.
 */
interface ListedDirectory extends AutoCloseable {
  /** Reads the directory afresh and gives every name in it to {@code sink}, in no order. */
  void names(Consumer<String> sink) throws IOException;

  /**
   * What {@code name} is, as a listing shows it: a regular file (a symlink to one inside the
   * root counts, with the target's size), a directory to walk (never through a symlink), or
   * null for anything else: gone, a device, a symlink leaving the root or to a directory.
   */
  Entry look(String name) throws IOException;

  /** The subdirectory {@code name}, which {@link #look} found to be a directory. */
  ListedDirectory open(String name) throws IOException;

  @Override
  void close() throws IOException;

  /** A file ({@code directory} false, with its size and modification time) or a directory. */
  record Entry(boolean directory, long size, long modifiedMillis) {}
}
