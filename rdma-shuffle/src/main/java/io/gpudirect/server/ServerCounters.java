package io.gpudirect.server;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** What one {@link BlockServer} has done since it started, counted as its connections do it. */
final class ServerCounters {
  private final AtomicLong bytesSent = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong rejected = new AtomicLong();
  private final AtomicLong authFailures = new AtomicLong();
  private final AtomicInteger readsInFlight = new AtomicInteger();
  /** What listing pages cost: directory entries read, and those looked at (fstatat). */
  private final AtomicLong listingNamesRead = new AtomicLong();
  private final AtomicLong listingEntriesLooked = new AtomicLong();
  /** Tests only: told of every listing page walked, with what it cost. */
  private volatile Consumer<DirectoryWalk> listingPages = walk -> { };

  /** A snapshot, with what only the server knows: connections open now and time since start. */
  ServerStats stats(int connectionsActive, long uptimeMillis) {
    return new ServerStats(bytesSent.get(), requests.get(), errors.get(), accepted.get(),
        connectionsActive, rejected.get(), authFailures.get(), readsInFlight.get(), uptimeMillis);
  }

  void listingWalked(DirectoryWalk walk) {
    listingNamesRead.addAndGet(walk.namesRead());
    listingEntriesLooked.addAndGet(walk.looked());
    listingPages.accept(walk);
  }

  /** Tests only: {@code observer} is told of every listing page walked from now on. */
  void observeListingPages(Consumer<DirectoryWalk> observer) {
    listingPages = observer;
  }

  /** Directory entries read by listing pages so far (tests check what a page costs). */
  long listingNamesRead() {
    return listingNamesRead.get();
  }

  /** Directory entries looked at ({@code fstatat}) by listing pages so far. */
  long listingEntriesLooked() {
    return listingEntriesLooked.get();
  }

  int readsInFlight() {
    return readsInFlight.get();
  }

  void countBytesSent(long n) {
    bytesSent.addAndGet(n);
  }

  void readStarted() {
    readsInFlight.incrementAndGet();
  }

  void readEnded() {
    readsInFlight.decrementAndGet();
  }

  void countRequest() {
    requests.incrementAndGet();
  }

  void countError() {
    errors.incrementAndGet();
  }

  /** A failed login is an error too. */
  void countAuthFailure() {
    authFailures.incrementAndGet();
    errors.incrementAndGet();
  }

  void countAccepted() {
    accepted.incrementAndGet();
  }

  void countRejected() {
    rejected.incrementAndGet();
  }
}
