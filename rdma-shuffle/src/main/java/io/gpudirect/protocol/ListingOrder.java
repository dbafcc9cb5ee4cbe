package io.gpudirect.protocol;

import java.util.Comparator;

/**
 * The order of a listing: tree order, paths compared name by name ({@code a/x} before
 * {@code a-b}, since {@code a} comes before {@code a-b}); names by {@link String#compareTo}. It
 * is the order of a walk that reads each directory's names in sorted order, so a server can
 * continue a listing after any path by skipping, in each directory on the way down to it, the
 * names before it, without looking at anything below them. As a string comparison, it is
 * {@code compareTo} with '/' below every other character.
 */
public final class ListingOrder implements Comparator<String> {
  public static final ListingOrder INSTANCE = new ListingOrder();

  private ListingOrder() {}

  @Override
  public int compare(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        if (x == '/') {
          return -1;
        }
        if (y == '/') {
          return 1;
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }
}
