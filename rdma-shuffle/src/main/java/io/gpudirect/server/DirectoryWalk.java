package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;

/**
 * One page of a listing: the regular files below a directory, in {@link ListingOrder}, that
 * come after a cursor (the last path of the page before), up to a number of entries and the
 * bytes of one frame.
 *
 * <p>Nothing is kept between pages, and a page costs what it returns, not what came before
 * it: the walk goes down the cursor's own path and, in each directory on the way, passes over
 * the names at or before the cursor's without looking at them or below them. A directory's
 * names come in no order, so each directory the page enters is read in full, but only the
 * page's worth of its names after the cursor is kept (the smallest, in a bounded heap) and
 * looked at ({@code fstatat}). Memory is bounded by the page (and a batch of names for each
 * directory the walk is inside), whatever the size of the tree.
 */
final class DirectoryWalk {
  /**
   * Fewest names taken from a directory at a time: with room for one more entry left, a
   * directory of many empty subdirectories is still read once per this many of them.
   */
  private static final int MIN_BATCH = 256;
  private final int maxEntries;
  private final int maxBytes;
  private final List<FileMeta> page = new ArrayList<>();
  private int bytes;
  private boolean full;
  /** Names read from directories; see {@link #namesRead()}. */
  private long namesRead;
  /** Names looked at; see {@link #looked()}. */
  private long looked;
  /** Paths of the directories this page has read; see {@link #rereads()}. */
  private final java.util.Set<String> directoriesRead = new HashSet<>();
  private int directoryReads;
  private int rereads;

  DirectoryWalk(int maxEntries, int maxBytes) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  /**
   * The page of files below {@code start} after {@code after}. {@code startPath} is the path of
   * {@code start} relative to the root ("" for the root), as entries are named; {@code after}
   * is "" for the first page, else a path below {@code startPath}.
   */
  ListResponse page(long requestId, ListedDirectory start, String startPath, String after,
      String requested) throws IOException {
    List<String> cursor = cursor(startPath, after, requested);
    walk(start, startPath, cursor, 0);
    return new ListResponse(requestId, List.copyOf(page), !full);
  }

  /** Directory entries read (every name of every directory the page entered), for tests. */
  long namesRead() {
    return namesRead;
  }

  /** Directory entries looked at ({@code fstatat}), for tests: about the page's size. */
  long looked() {
    return looked;
  }

  /** Times this page read a directory's names, for tests. */
  int directoryReads() {
    return directoryReads;
  }

  /** Times this page read a directory's names that it had read already, for tests. */
  int rereads() {
    return rereads;
  }

  /** The cursor's names below {@code startPath}; refused unless it is below it. */
  private static List<String> cursor(String startPath, String after, String requested) {
    if (after.isEmpty()) {
      return List.of();
    }
    String prefix = startPath.isEmpty() ? "" : startPath + "/";
    String below = after.startsWith(prefix) ? after.substring(prefix.length()) : "";
    List<String> names = below.isEmpty() ? List.of() : List.of(below.split("/", -1));
    if (names.isEmpty() || names.contains("") || names.contains(".") || names.contains("..")
        || after.indexOf('\0') >= 0) {
      throw new RequestRefusedException(ErrorCode.BAD_REQUEST, "LIST cursor "
          + RootDirectory.show(after) + " is not a path below the listed "
          + RootDirectory.show(requested) + "; send the last path of the page before");
    }
    return names;
  }

  /**
   * Adds the files of {@code dir} (at {@code path}) that come after the cursor's names from
   * {@code depth} on (all of them when the cursor has none left), until the page is full.
   */
  private void walk(ListedDirectory dir, String path, List<String> cursor, int depth)
      throws IOException {
    String after = null;
    if (depth < cursor.size()) {
      after = cursor.get(depth);
      // What is below the cursor's name here comes after the cursor: the rest of the directory
      // the page before ended in, or all of a directory that has replaced the file it ended with.
      ListedDirectory.Entry e = look(dir, after);
      if (e != null && e.directory()) {
        enter(dir, after, child(path, after), cursor, depth + 1);
        if (full) {
          return;
        }
      }
    }
    while (true) {
      int batch = Math.max(MIN_BATCH, maxEntries - page.size());
      List<String> names = smallestAfter(dir, path, after, batch);
      String previous = null;
      for (String name : names) {
        // Names the JDK could not decode all read as U+FFFD: one of each, so that a page never
        // names a path twice (a client refuses a listing that does not go forward).
        if (name.equals(previous)) {
          continue;
        }
        previous = name;
        ListedDirectory.Entry e = look(dir, name);
        if (e == null) {
          continue;
        }
        String p = child(path, name);
        if (e.directory()) {
          // Below a path this long no file could be named in a request: not walked, which
          // also bounds how deep the walk goes.
          if (p.length() < Protocol.MAX_PATH_BYTES) {
            enter(dir, name, p, List.of(), 0);
          }
        } else {
          add(new FileMeta(p, e.size(), e.modifiedMillis(), false, e.version()));
        }
        if (full) {
          return;
        }
      }
      if (names.size() < batch) {
        return;
      }
      // The page still has room (directories without files, things not listed): read on.
      after = names.get(names.size() - 1);
    }
  }

  private void enter(ListedDirectory dir, String name, String path, List<String> cursor,
      int depth) throws IOException {
    ListedDirectory sub;
    try {
      sub = dir.open(name);
    } catch (IOException e) {
      return; // unreadable or gone: left out, as a file that cannot be looked at is
    }
    try (sub) {
      walk(sub, path, cursor, depth);
    } catch (IOException e) {
      // unreadable, or gone while being walked: what is left of it is left out
    }
  }

  private ListedDirectory.Entry look(ListedDirectory dir, String name) {
    looked++;
    try {
      return dir.look(name);
    } catch (IOException e) {
      return null;
    }
  }

  /** The {@code n} smallest names of {@code dir} after {@code after} (all, when null), sorted. */
  private List<String> smallestAfter(ListedDirectory dir, String path, String after, int n)
      throws IOException {
    directoryReads++;
    if (!directoriesRead.add(path)) {
      rereads++;
    }
    // The largest kept on top, so that it is the one to go when a smaller name comes.
    PriorityQueue<String> kept = new PriorityQueue<>(Math.min(n, 1024), Collections.reverseOrder());
    dir.names(name -> {
      namesRead++;
      if (after != null && name.compareTo(after) <= 0) {
        return;
      }
      if (kept.size() < n) {
        kept.add(name);
      } else if (name.compareTo(kept.peek()) < 0) {
        kept.poll();
        kept.add(name);
      }
    });
    List<String> sorted = new ArrayList<>(kept);
    Collections.sort(sorted);
    return sorted;
  }

  private void add(FileMeta entry) {
    if (entry.path().getBytes(StandardCharsets.UTF_8).length > Protocol.MAX_PATH_BYTES) {
      return; // a path no request could name: not listed
    }
    int n = ListResponse.entryLength(entry);
    if (bytes + n > maxBytes) {
      full = true;
      return;
    }
    page.add(entry);
    bytes += n;
    if (page.size() >= maxEntries) {
      full = true;
    }
  }

  private static String child(String path, String name) {
    return path.isEmpty() ? name : path + "/" + name;
  }
}
