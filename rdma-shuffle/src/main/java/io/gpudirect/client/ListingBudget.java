package io.gpudirect.client;

import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.ListResponse;

/**
 * What one listing may still take: entries, their bytes and time, from {@link ClientConfig}.
 * A server decides how many pages a listing has; this is what keeps one that never sends the
 * last page from filling the client's memory or holding it forever.
 */
final class ListingBudget {
  private final String server;
  private final String path;
  private final ClientConfig config;
  private final long deadline;
  private long entries;
  private long bytes;

  ListingBudget(String server, String path, ClientConfig config) {
    this.server = server;
    this.path = path;
    this.config = config;
    this.deadline = System.nanoTime() + config.listTimeout().toNanos();
  }

  long nanosLeft() {
    return deadline - System.nanoTime();
  }

  /** Counts a page in, before its entries are kept; refused past a limit. */
  void take(ListResponse page) {
    entries += page.entries().size();
    for (FileMeta e : page.entries()) {
      bytes += ListResponse.entryLength(e);
    }
    if (entries > config.maxListEntries()) {
      throw over(ListingLimitException.Limit.ENTRIES, "more than " + config.maxListEntries() + " entries", "listing.maxEntries",
          "maxListEntries");
    }
    if (bytes > config.maxListBytes()) {
      throw over(ListingLimitException.Limit.BYTES, "more than " + config.maxListBytes() + " bytes of entries", "listing.maxBytes",
          "maxListBytes");
    }
    if (nanosLeft() <= 0) {
      throw timedOut();
    }
  }

  ListingLimitException timedOut() {
    return over(ListingLimitException.Limit.TIME, "no last page within " + config.listTimeout() + " (" + entries
        + " entries so far)", "listing.timeout", "listTimeout");
  }

  private ListingLimitException over(ListingLimitException.Limit limit, String what, String option, String setting) {
    return new ListingLimitException(limit, "Listing '" + path + "' on gpudirect server " + server
        + " stopped: it has " + what + ", the client's limit. Either the directory is that"
        + " large, or the server keeps sending pages. To allow more, raise the option " + option
        + " (spark.gpudirect." + option + "; ClientConfig." + setting + ")");
  }
}
