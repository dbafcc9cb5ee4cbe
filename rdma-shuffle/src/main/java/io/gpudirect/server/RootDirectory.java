package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.protocol.ListResponse;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The directory a server exposes, read-only, held open for the server's life.
 *
 * <p>A requested path is taken apart lexically ({@link RequestedPath}), then resolved name by
 * name from this open directory, as {@code openat(2)} does: each directory on the way is opened
 * relative to the one before it, and no name is followed if it is a symlink ({@code O_NOFOLLOW}
 * on every open, {@code AT_SYMLINK_NOFOLLOW} on every {@code fstatat}). Whatever is renamed
 * meanwhile, what gets opened was an entry below the root when it was opened: a directory swapped
 * for a symlink between a check and an open makes the open fail instead of leaving the root
 * (issue 13, where checking by path and then opening by path did). Attributes come from the
 * directory the name was found in, or from the opened file itself, never from a second lookup by
 * path from the root. Symlinks are not followed even when they would stay inside the root.
 *
 * <p>Opens run on {@link FileOpeners}' threads, because any open may meet a FIFO swapped in.
 */
final class RootDirectory implements AutoCloseable {
  private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

  private final Path root;
  private final SecureDirectoryStream<Path> dir;
  private final FileOpeners openers;

  /** @throws IOException whose message says why the root cannot be served, in a few words */
  RootDirectory(Path root) throws IOException {
    Path real;
    try {
      real = root.toRealPath();
    } catch (NoSuchFileException e) {
      // The JDK's message is the bare path; say what is wrong with it.
      throw new IOException("it does not exist", e);
    } catch (AccessDeniedException e) {
      throw new IOException("it is not readable (permission denied on " + e.getFile() + ")", e);
    }
    if (!Files.isDirectory(real)) {
      throw new IOException("it is not a directory");
    }
    if (!Files.isReadable(real) || !Files.isExecutable(real)) {
      throw new IOException("it is not readable by this user (it needs read and execute permission)");
    }
    this.root = real;
    DirectoryStream<Path> opened = Files.newDirectoryStream(real);
    if (!(opened instanceof SecureDirectoryStream<Path> secure)) {
      opened.close();
      throw new IOException("this platform (" + System.getProperty("os.name") + ") cannot open"
          + " files relative to an open directory (Java gives no SecureDirectoryStream), so the"
          + " server cannot keep requests inside its root; run the server on Linux");
    }
    this.dir = secure;
    this.openers = new FileOpeners(String.valueOf(real.getFileName()));
  }

  Path path() {
    return root;
  }

  /** A path as a request named it, quoted and with control characters escaped, for errors. */
  static String show(String requested) {
    return RequestedPath.show(requested);
  }

  /** The threads that open below this root (for tests: how many opens were released). */
  FileOpeners openers() {
    return openers;
  }

  /**
   * A regular file below the root as one walk found it. {@code channel} is newly opened, or
   * null when the name still holds the file of {@code reuseKey} (the caller has it open).
   * {@code size} is the opened file's ({@code fstat}) or, when reused, that of the file the
   * walk found; {@code fileKey} is the file key the channel is known to have open, or null.
   */
  record FoundFile(FileChannel channel, long size, BasicFileAttributes attributes, Object fileKey)
      implements AutoCloseable {
    @Override
    public void close() {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // read-only: nothing lost
        }
      }
    }
  }

  /**
   * The directories one connection keeps open between its requests (see {@link OpenFiles}),
   * so that its walks need no open at all once they have been made: every name on the way is
   * still looked at in the directory before it, and a kept directory is used only while that
   * look finds the very directory kept (same file key; a directory cannot be hard-linked).
   */
  interface KeptDirectories {
    /** The directory kept for {@code prefix} if it is the directory of {@code key}, else null. */
    SecureDirectoryStream<Path> get(String prefix, Object key);

    /**
     * Keeps {@code d}, the directory of {@code key}, for {@code prefix}, and closes it from now;
     * false, taking nothing, where it keeps no more (the walk then closes d itself).
     */
    boolean keep(String prefix, Object key, SecureDirectoryStream<Path> d);

    /** An open left blocked in {@code d}: drop it unclosed (its opener closes it). */
    void forget(SecureDirectoryStream<Path> d);
  }

  /**
   * The regular file {@code path} names, opened unless it is the file of {@code reuseKey};
   * the caller closes the channel. FIFOs, devices, directories and symlinks are refused.
   * {@code kept}: the connection's directories, or null to keep none.
   */
  FoundFile openFile(RequestedPath path, Object reuseKey, KeptDirectories kept) {
    if (path.isRoot()) {
      throw notAFile(path.requested(), true);
    }
    try (Walk walk = new Walk(path, kept)) {
      walk.toParent();
      Path name = path.last();
      BasicFileAttributes a = attributes(walk.at, name, path);
      checkRegular(path, a);
      if (reuseKey != null && reuseKey.equals(a.fileKey())) {
        return new FoundFile(null, a.size(), a, reuseKey);
      }
      SecureDirectoryStream<Path> at = walk.at;
      FileChannel fc = (FileChannel) walk.open(name, path.names().size(),
          () -> at.newByteChannel(name, Set.of(StandardOpenOption.READ, NOFOLLOW)));
      try {
        return opened(at, name, path, a, fc);
      } catch (RuntimeException e) {
        closeQuietly(fc);
        throw e;
      }
    }
  }

  /**
   * What is known of a file just opened: its size from the descriptor, its key when the name
   * held the same file before and after the open (else the open may have raced a rename, and
   * the key is not claimed).
   */
  private FoundFile opened(SecureDirectoryStream<Path> at, Path name, RequestedPath path,
      BasicFileAttributes before, FileChannel fc) {
    try {
      // lseek: a FIFO or socket swapped in after the check (and released) cannot seek.
      fc.position();
    } catch (IOException e) {
      throw notAFile(path.requested(), false);
    }
    long size;
    try {
      size = fc.size();
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot read the size of " + show(path.requested()) + ": " + e, e);
    }
    Object key = before.fileKey();
    try {
      BasicFileAttributes after = at.getFileAttributeView(name, BasicFileAttributeView.class,
          NOFOLLOW).readAttributes();
      // The name holding the same inode before and after does not prove the open took it: a name
      // swapped to another file and back between the two looks (ABA) gave the other file's
      // channel under this key, and a kept file reused by key then served the other's bytes
      // (ShuffleDirectorySwapRaceTest). Where the descriptor can be asked, its own inode decides.
      BasicFileAttributes own = DescriptorAttributes.of(fc);
      if (key == null || !after.isRegularFile() || !key.equals(after.fileKey())
          || own != null && !key.equals(own.fileKey())) {
        key = null;
      }
    } catch (IOException e) {
      key = null;
    }
    return new FoundFile(fc, size, before, key);
  }

  /**
   * The attributes of what {@code path}'s last name holds now, found as {@link #openFile} finds
   * a file ({@code fstatat} relative to the directory the walk opened, nothing followed) but
   * opening no file: for the check after a read, which looks for the file it read.
   */
  BasicFileAttributes attributesNow(RequestedPath path, KeptDirectories kept) {
    if (path.isRoot()) {
      throw notAFile(path.requested(), true);
    }
    return attributesNow(path, path.last(), kept);
  }

  /** As above, for a path that is not the root, whose {@link RequestedPath#last} is {@code last}. */
  BasicFileAttributes attributesNow(RequestedPath path, Path last, KeptDirectories kept) {
    try (Walk walk = new Walk(path, kept)) {
      walk.toParent();
      return attributes(walk.at, last, path);
    }
  }

  FileMeta stat(String requested) {
    RequestedPath path = RequestedPath.of(requested);
    if (path.isRoot()) {
      try {
        return meta("", dir.getFileAttributeView(BasicFileAttributeView.class).readAttributes());
      } catch (IOException e) {
        throw new RequestRefusedException(ErrorCode.IO_ERROR,
            "Cannot stat " + show(requested) + ": " + e.getMessage(), e);
      }
    }
    try (Walk walk = new Walk(path, null)) {
      walk.toParent();
      BasicFileAttributes a = attributes(walk.at, path.last(), path);
      if (a.isSymbolicLink()) {
        throw throughLink(path, path.names().size());
      }
      if (!a.isRegularFile() && !a.isDirectory()) {
        throw notAFile(requested, false);
      }
      return meta(path.normalized(), a);
    }
  }

  /**
   * One page of the listing of {@code requested}: the regular files below it after the cursor
   * {@code after}, in the order {@link DirectoryWalk} walks them; just the file, on one page,
   * for a file. The walk goes through directories opened name by name from this one, as every
   * other request's does ({@link ListingDirectory}).
   */
  ListResponse list(long requestId, String requested, String after, DirectoryWalk pages) {
    RequestedPath path = RequestedPath.of(requested);
    try (Walk walk = new Walk(path, null)) {
      if (path.isRoot()) {
        // The root's own stream can be read only once in its life: list a stream of its own.
        walk.descend(Path.of("."), 0);
      } else {
        walk.toParent();
        Path name = path.last();
        BasicFileAttributes a = attributes(walk.at, name, path);
        if (a.isSymbolicLink()) {
          throw throughLink(path, path.names().size());
        }
        if (a.isRegularFile()) {
          return ListResponse.last(requestId,
              after.isEmpty() ? List.of(meta(path.normalized(), a)) : List.of());
        }
        if (!a.isDirectory()) {
          throw notAFile(requested, false);
        }
        walk.descend(name, path.names().size());
      }
      try (ListingDirectory start = new ListingDirectory(walk, path.normalized())) {
        return pages.page(requestId, start, path.normalized(), after, requested);
      }
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot list " + show(requested) + ": " + e.getMessage(), e);
    }
  }

  /**
   * A directory of a listing, held open by a walk from the root: names are looked at in it
   * ({@code fstatat}, no link followed) and subdirectories opened from it on an opener, so a
   * directory swapped for a symlink or a FIFO meanwhile is never followed nor hangs the
   * connection. Symlinks, FIFOs, sockets and devices are not listed.
   */
  private final class ListingDirectory implements ListedDirectory {
    /** The walk whose current directory this is; it closes the directory. */
    private final Walk walk;
    /** This directory's path relative to the root, for messages. */
    private final String path;
    /** Whether the walk's stream has been read: a directory stream reads only once. */
    private boolean read;

    ListingDirectory(Walk walk, String path) {
      this.walk = walk;
      this.path = path;
    }

    @Override
    public void names(Consumer<String> sink) throws IOException {
      if (read) {
        throw new IllegalStateException("a listing page reads " + show(path) + " only once");
      }
      read = true;
      try {
        for (Path entry : walk.at) {
          sink.accept(entry.getFileName().toString());
        }
      } catch (DirectoryIteratorException e) {
        throw e.getCause();
      }
    }

    @Override
    public Entry look(String name) throws IOException {
      if (!RequestedPath.representable(name)) {
        throw RequestedPath.unrepresentable("Cannot list " + show(walk.path.requested())
            + " at " + show(path.isEmpty() ? name : path + "/" + name), name);
      }
      BasicFileAttributes a;
      try {
        a = walk.at.getFileAttributeView(Path.of(name), BasicFileAttributeView.class, NOFOLLOW)
            .readAttributes();
      } catch (NoSuchFileException gone) {
        return null;
      }
      // Links are not followed, FIFOs, sockets and devices not listed.
      if (a.isDirectory()) {
        return new Entry(true, 0, a.lastModifiedTime().toMillis(), FileVersion.ANY);
      }
      return a.isRegularFile()
          ? new Entry(false, a.size(), a.lastModifiedTime().toMillis(), FileVersions.of(a))
          : null;
    }

    @Override
    public ListedDirectory open(String name) throws IOException {
      Walk sub = walk.below(walk.at);
      try {
        sub.descendQuietly(Path.of(name));
      } catch (FileOpeners.LeftBehindException e) {
        // The blocked opener now owns this directory: this walk must not close it.
        walk.handOver();
        throw e;
      }
      return new ListingDirectory(sub, path.isEmpty() ? name : path + "/" + name);
    }

    @Override
    public void close() {
      walk.close();
    }
  }

  /**
   * One walk from the root: the directory it is at, and whether it must close it. Every open
   * goes through {@link FileOpeners}; an open given up on leaves its directory to the opener,
   * so the walk neither closes it nor lets the connection's kept directories close it.
   */
  private final class Walk implements AutoCloseable {
    final RequestedPath path;
    final KeptDirectories kept;
    SecureDirectoryStream<Path> at;
    /** Whether {@link #at} is this walk's own to close (not the root, not a kept one). */
    boolean owned;

    Walk(RequestedPath path, KeptDirectories kept) {
      this(path, kept, dir, false);
    }

    private Walk(RequestedPath path, KeptDirectories kept, SecureDirectoryStream<Path> at,
        boolean owned) {
      this.path = path;
      this.kept = kept;
      this.at = at;
      this.owned = owned;
    }

    /** A walk on from {@code d} that closes only what it opens itself (for listings). */
    Walk below(SecureDirectoryStream<Path> d) {
      return new Walk(path, null, d, false);
    }

    /** Moves to the directory holding the path's last name, name by name from the root. */
    void toParent() {
      List<String> names = path.names();
      for (int i = 0; i < names.size() - 1; i++) {
        Path name = Path.of(names.get(i));
        BasicFileAttributes a = attributes(at, name, path);
        if (a.isSymbolicLink()) {
          throw throughLink(path, i + 1);
        }
        if (!a.isDirectory()) {
          throw notFound(path.requested());
        }
        String prefix = path.prefix(i + 1);
        SecureDirectoryStream<Path> next = kept == null ? null : kept.get(prefix, a.fileKey());
        if (next != null) {
          moveTo(next, false);
        } else {
          descend(name, i + 1);
          Object key = keyOf(at);
          if (kept != null && key != null && key.equals(a.fileKey()) && kept.keep(prefix, key, at)) {
            owned = false;
          }
        }
      }
    }

    /** Opens directory {@code name} of the current one and moves into it. */
    void descend(Path name, int n) {
      SecureDirectoryStream<Path> from = at;
      moveTo(open(name, n, () -> from.newDirectoryStream(name, NOFOLLOW)), true);
    }

    /** As {@link #descend}, but a name that cannot be opened as a directory just throws. */
    void descendQuietly(Path name) throws IOException {
      SecureDirectoryStream<Path> from = at;
      try {
        moveTo(openers.open(path.requested(), from, name, from == dir,
            () -> from.newDirectoryStream(name, NOFOLLOW)), true);
      } catch (FileOpeners.LeftBehindException e) {
        handOver();
        throw e;
      }
    }

    /** Opens {@code name} of the current directory on an opener ({@code n}: names so far). */
    <R extends AutoCloseable> R open(Path name, int n, FileOpeners.OpenCall<R> call) {
      SecureDirectoryStream<Path> from = at;
      try {
        return openers.open(path.requested(), from, name, from == dir, call);
      } catch (FileOpeners.LeftBehindException e) {
        handOver();
        throw e;
      } catch (IOException e) {
        throw refusedOpen(from, name, path, n, e);
      }
    }

    /** The current directory now belongs to a blocked opener. */
    private void handOver() {
      if (!owned && at != dir && kept != null) {
        kept.forget(at);
      }
      owned = false;
      at = null;
    }

    private void moveTo(SecureDirectoryStream<Path> next, boolean ownNext) {
      close();
      at = next;
      owned = ownNext;
    }

    @Override
    public void close() {
      if (owned && at != null) {
        closeQuietly(at);
      }
      owned = false;
    }
  }

  /** The file key of an open directory, from the descriptor itself ({@code fstat}). */
  private static Object keyOf(SecureDirectoryStream<Path> d) {
    try {
      return d.getFileAttributeView(BasicFileAttributeView.class).readAttributes().fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  /** The attributes of {@code name} in {@code at} itself (a link is not followed). */
  private static BasicFileAttributes attributes(SecureDirectoryStream<Path> at, Path name,
      RequestedPath path) {
    try {
      return at.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW)
          .readAttributes();
    } catch (NoSuchFileException e) {
      throw notFound(path.requested());
    } catch (IOException e) {
      throw new RequestRefusedException(ErrorCode.IO_ERROR,
          "Cannot stat " + show(path.requested()) + ": " + e.getMessage(), e);
    }
  }

  private void checkRegular(RequestedPath path, BasicFileAttributes a) {
    if (a.isSymbolicLink()) {
      throw throughLink(path, path.names().size());
    }
    if (!a.isRegularFile()) {
      throw notAFile(path.requested(), a.isDirectory());
    }
  }

  /**
   * Why an open failed: said by the open's own error where it names the cause, else by what the
   * name is now. The open's error comes first because the name may hold something else again
   * by the time it is looked at: a name swapped for a symlink, or renamed away, and back, made
   * the open fail with ELOOP or ENOENT while the look after it found the directory or file, and
   * the refusal said IO_ERROR, as for a failing disk.
   */
  private RequestRefusedException refusedOpen(SecureDirectoryStream<Path> at, Path name,
      RequestedPath path, int n, IOException e) {
    if (e instanceof NoSuchFileException) {
      return notFound(path.requested());
    }
    if (symlinkRefused(e)) {
      return throughLink(path, n);
    }
    BasicFileAttributes now;
    try {
      now = at.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW)
          .readAttributes();
    } catch (IOException gone) {
      return notFound(path.requested());
    }
    if (now.isSymbolicLink()) {
      return throughLink(path, n);
    }
    if (e instanceof java.nio.file.NotDirectoryException) {
      return notFound(path.requested());
    }
    return new RequestRefusedException(ErrorCode.IO_ERROR,
        "Cannot open " + show(path.requested()) + ": " + e, e);
  }

  /**
   * Whether an open with {@code NOFOLLOW_LINKS} failed because the name was a symlink (ELOOP):
   * the JDK says so only in its message, which it ends with words of its own (not the system's,
   * which may be translated): a file's open (UnixChannelFactory) and a directory's
   * (UnixSecureDirectoryStream) in different ones.
   */
  private static boolean symlinkRefused(IOException e) {
    String m = String.valueOf(e.getMessage());
    return m.endsWith("(NOFOLLOW_LINKS specified)") || m.endsWith("unable to access attributes of symbolic link");
  }

  /**
   * A symlink met at the first {@code n} names. Its target is read only to word the error
   * (by path, so it may be stale); nothing is followed whatever it says.
   */
  private RequestRefusedException throughLink(RequestedPath path, int n) {
    String link = path.prefix(Math.max(1, n));
    boolean inside;
    try {
      Path linkPath = root.resolve(link);
      Path target = linkPath.getParent().resolve(Files.readSymbolicLink(linkPath)).normalize();
      inside = target.startsWith(root);
    } catch (IOException | RuntimeException e) {
      inside = false;
    }
    if (!inside) {
      return new RequestRefusedException(ErrorCode.OUTSIDE_ROOT, "Path "
          + show(path.requested()) + " resolves outside the server root (through the symlink "
          + show(link) + "); refused: the server follows no symlinks");
    }
    return new RequestRefusedException(ErrorCode.NOT_A_FILE, "Path " + show(path.requested())
        + " goes through the symlink " + show(link) + "; the server follows no symlinks, not"
        + " even within its root: name the file the link points to");
  }

  private static FileMeta meta(String relative, BasicFileAttributes a) {
    return new FileMeta(relative, a.isDirectory() ? 0 : a.size(),
        a.lastModifiedTime().toMillis(), a.isDirectory(),
        a.isDirectory() ? FileVersion.ANY : FileVersions.of(a));
  }

  private static RequestRefusedException notFound(String requested) {
    return new RequestRefusedException(ErrorCode.NOT_FOUND, "No such file or directory: "
        + show(requested) + " (paths are relative to the server root)");
  }

  private static RequestRefusedException notAFile(String requested, boolean directory) {
    String what = directory ? "a directory" : "not a regular file (a FIFO, socket or device)";
    return new RequestRefusedException(ErrorCode.NOT_A_FILE,
        "Path " + show(requested) + " is " + what + "; only regular files can be read");
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // read-only: nothing lost
    }
  }

  /**
   * Stops opening and closes the root. Closing waits for every walk using it, and one blocked
   * in {@code open(2)} may never end: so it is closed on a thread of its own.
   */
  @Override
  public void close() {
    openers.close();
    Thread t = new Thread(() -> closeQuietly(dir), "gpudirect-server-root-close");
    t.setDaemon(true);
    t.start();
  }
}
