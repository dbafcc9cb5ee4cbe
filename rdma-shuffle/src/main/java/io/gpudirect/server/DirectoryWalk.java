package io.gpudirect.server;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * One page of a listing: the regular files below a directory, in {@link ListingOrder}, that
 * come after a cursor (where the page before ended), up to a number of entries and the bytes of
 * one frame.
 *
 * <p>Nothing is kept between pages, and a page costs what it passes over, not what came before
 * it nor what the directories hold: the walk goes down the cursor's own path and, in each
 * directory on the way, passes over the names at or before the cursor's without looking at
 * them or below them. A directory's names come in no order, so each directory the page enters
 * is read in full, once: only as many of its names after the cursor as the page may still look
 * at are kept (the smallest) and looked at ({@code fstatat}). Every name looked at takes one
 * of the page's {@link #maxLooks} places, whatever it turns out to be (a file, a directory, a
 * symlink or anything else not listed), so a page ends early, with the last path it passed as
 * the next page's cursor, in a directory of many names that are not files. Memory is bounded
 * by the page (and the names kept for each directory the walk is inside), whatever the size of
 * the tree.
 */
final class DirectoryWalk {
  private final int maxEntries;
  private final int maxBytes;
  /** Names a page may look at: as many as it may list. */
  private final int maxLooks;
  private final List<FileMeta> page = new ArrayList<>();
  private int bytes;
  /** Looks that took a place of the page; those at the cursor's own names do not. */
  private int looks;
  /** The page ended before the walk did: full, out of looks, or out of a directory's names. */
  private boolean ended;
  /** The last path the page passed, in listing order: where the next page goes on. */
  private String passed;
  /** Names read from directories; see {@link #namesRead()}. */
  private long namesRead;
  /** Names looked at; see {@link #looked()}. */
  private long looked;
  /** Paths of the directories this page has read; see {@link #rereads()}. */
  private final Set<String> directoriesRead = new HashSet<>();
  private int directoryReads;
  private int rereads;

  DirectoryWalk(int maxEntries, int maxBytes) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.maxLooks = maxEntries;
  }

  /**
   * The page of files below {@code start} after {@code after}. {@code startPath} is the path of
   * {@code start} relative to the root ("" for the root), as entries are named; {@code after}
   * is "" for the first page, else a path below {@code startPath}.
   */
  ListResponse page(long requestId, ListedDirectory start, String startPath, String after,
      String requested) throws IOException {
    List<String> cursor = cursor(startPath, after, requested);
    passed = after;
    walk(start, startPath, cursor, 0);
    return ended ? ListResponse.more(requestId, List.copyOf(page), passed)
        : ListResponse.last(requestId, List.copyOf(page));
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

  /** Times this page read a directory's names that it had read already, for tests: none. */
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
          + RootDirectory.show(requested) + "; send the cursor of the page before");
    }
    return names;
  }

  /**
   * Adds the files of {@code dir} (at {@code path}) that come after the cursor's names from
   * {@code depth} on (all of them when the cursor has none left), until the page ends.
   */
  private void walk(ListedDirectory dir, String path, List<String> cursor, int depth)
      throws IOException {
    String after = null;
    if (depth < cursor.size()) {
      after = cursor.get(depth);
      // What is below the cursor's name here comes after the cursor: the rest of the directory
      // the page before ended in, or all of a directory that has replaced the file it ended with.
      looked++;
      ListedDirectory.Entry e = look(dir, after);
      if (e != null && e.directory()) {
        enter(dir, after, child(path, after), cursor, depth + 1);
        if (ended) {
          return;
        }
      }
    }
    if (looks >= maxLooks) {
      ended = true;
      return;
    }
    // Read once: no more of its names than the page may still look at are any use to it.
    Kept names = smallestAfter(dir, path, after, maxLooks - looks);
    for (String name : names.names()) {
      if (looks >= maxLooks) {
        ended = true;
        return;
      }
      looks++;
      looked++;
      ListedDirectory.Entry e = look(dir, name);
      String p = child(path, name);
      if (e == null || e.directory()) {
        // Passed: a directory's own path, as a cursor, puts what is in it after it.
        passed = p;
        if (e != null && utf8Length(p) + 2 <= Protocol.MAX_PATH_BYTES) {
          if (looks >= maxLooks) {
            ended = true;
            return;
          }
          enter(dir, name, p, List.of(), 0);
        }
      } else if (add(new FileMeta(p, e.size(), e.modifiedMillis(), false, e.version()))) {
        passed = p;
      }
      if (ended) {
        return;
      }
    }
    // Its names after those kept are the next page's: the directory is not read again.
    ended = names.more();
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

  private static ListedDirectory.Entry look(ListedDirectory dir, String name) {
    try {
      return dir.look(name);
    } catch (IOException e) {
      return null;
    }
  }

  /** Names of a directory, sorted; {@code more}: it has others after them. */
  private record Kept(TreeSet<String> names, boolean more) {}

  /**
   * The {@code n} smallest names of {@code dir} after {@code after} (all, when null) whose
   * path a request could name, sorted and each once (names the JDK could not decode all read
   * as U+FFFD: one of each, so that a page never names a path twice).
   */
  private Kept smallestAfter(ListedDirectory dir, String path, String after, int n)
      throws IOException {
    directoryReads++;
    if (!directoriesRead.add(path)) {
      rereads++;
    }
    // Below a path this long no file could be named in a request, nor could a cursor name it.
    int room = Protocol.MAX_PATH_BYTES - (path.isEmpty() ? 0 : utf8Length(path) + 1);
    TreeSet<String> kept = new TreeSet<>();
    boolean[] more = {false};
    dir.names(name -> {
      namesRead++;
      if ((after != null && name.compareTo(after) <= 0) || utf8Length(name) > room) {
        return;
      }
      if (kept.size() < n) {
        kept.add(name);
      } else if (name.compareTo(kept.last()) < 0) {
        if (kept.add(name)) {
          kept.pollLast();
          more[0] = true;
        }
      } else if (!name.equals(kept.last())) {
        more[0] = true;
      }
    });
    return new Kept(kept, more[0]);
  }

  /** Adds a file to the page; false when it does not fit, which ends the page before it. */
  private boolean add(FileMeta entry) {
    int n = ListResponse.entryLength(entry);
    if (bytes + n > maxBytes) {
      ended = true;
      return false;
    }
    page.add(entry);
    bytes += n;
    if (page.size() >= maxEntries) {
      ended = true;
    }
    return true;
  }

  /** Bytes of {@code s} in UTF-8, or a few more (an unpaired surrogate counts 2, encodes as 1). */
  private static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      n += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
    }
    return n;
  }

  private static String child(String path, String name) {
    return path.isEmpty() ? name : path + "/" + name;
  }
}
