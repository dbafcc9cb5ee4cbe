package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.FileMeta;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.ListResponse;
import io.gpudirect.protocol.ListingOrder;
import io.gpudirect.testing.RawPeer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A listing, page by page: each page costs what it returns, not what came before it. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListingPagesTest {
  static final int DIRS = 40;
  static final int FILES_PER_DIR = 1000;
  static final int PAGE = 1000;

  /**
   * 40,000 files in 40 directories, 1000 a page. Before the cursor, every page walked (and
   * {@code lstat}ed) the whole tree again: 40 pages of 40,000. Now a page reads the root's
   * names and those of the one or two directories it is in, and looks at about a page of them.
   */
  @Test
  void pagesCostWhatTheyReturnNotWhatCameBefore(@TempDir Path root) throws IOException {
    for (int d = 0; d < DIRS; d++) {
      Path dir = Files.createDirectory(root.resolve(String.format("part-%02d", d)));
      for (int f = 0; f < FILES_PER_DIR; f++) {
        Files.createFile(dir.resolve(String.format("f-%04d.bin", f)));
      }
    }
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxListPageEntries(PAGE)
        .build().start(); RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      List<String> all = new ArrayList<>();
      List<long[]> costs = new ArrayList<>();
      String after = ListRequest.FIRST_PAGE;
      for (int id = 1; ; id++) {
        ServerCounters counters = s.context().counters();
        long read = counters.listingNamesRead();
        long looked = counters.listingEntriesLooked();
        peer.send(new ListRequest(id, "/", after));
        ListResponse page = (ListResponse) peer.receive();
        costs.add(new long[] {counters.listingNamesRead() - read, counters.listingEntriesLooked() - looked});
        page.entries().forEach(e -> all.add(e.path()));
        if (page.last()) {
          break;
        }
        after = page.cursor();
      }
      assertEquals(DIRS * FILES_PER_DIR, all.size());
      assertEquals(all.stream().distinct().sorted(ListingOrder.INSTANCE).toList(), all);
      for (int i = 0; i < costs.size(); i++) {
        long[] c = costs.get(i);
        // The root's 40 names, the directory the page before ended in, the one this page
        // ends in, each read once.
        assertTrue(c[0] <= DIRS + 2L * FILES_PER_DIR, "page " + i + " read " + c[0] + " names");
        assertTrue(c[1] <= PAGE + DIRS + 2, "page " + i + " looked at " + c[1] + " entries");
      }
      System.out.printf("ListingPagesTest: %d pages; names read per page, first %d, last %d;"
          + " entries looked at, first %d, last %d%n", costs.size(), costs.get(0)[0],
          costs.get(costs.size() - 1)[0], costs.get(0)[1], costs.get(costs.size() - 1)[1]);
    }
  }

  @Test
  void theOrderIsTreeOrderAndAListingGoesOnAfterAPathThatWentAway(@TempDir Path root)
      throws IOException {
    Files.createDirectories(root.resolve("a/sub"));
    Files.createFile(root.resolve("a/x"));
    Files.createFile(root.resolve("a/sub/y"));
    Files.createFile(root.resolve("a-b"));
    Files.createFile(root.resolve("a.txt"));
    Files.createFile(root.resolve("b"));
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxListPageEntries(4)
        .build().start();
        BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
            ClientConfig.builder().streams(1).transport("tcp").build());
        RawPeer peer = new RawPeer(s.port())) {
      assertEquals(List.of("a/sub/y", "a/x", "a-b", "a.txt", "b"),
          c.list("/").stream().map(FileEntry::path).toList());
      peer.handshake();
      peer.send(new ListRequest(1, "/", ""));
      ListResponse first = (ListResponse) peer.receive();
      // Four names looked at: a, a/sub, a/sub/y and a/x.
      assertEquals(List.of("a/sub/y", "a/x"), first.entries().stream().map(FileMeta::path).toList());
      assertEquals("a/x", first.cursor());
      // The last file sent, and the directory it was in, are gone before the next page.
      Files.delete(root.resolve("a/x"));
      Files.delete(root.resolve("a/sub/y"));
      Files.delete(root.resolve("a/sub"));
      peer.send(new ListRequest(2, "/", "a/sub/y"));
      ListResponse next = (ListResponse) peer.receive();
      assertEquals(List.of("a-b", "a.txt", "b"), next.entries().stream().map(FileMeta::path).toList());
      assertTrue(next.last());
      // The file the page ended with is now a directory: what is in it comes after it.
      Files.delete(root.resolve("a.txt"));
      Files.createFile(Files.createDirectory(root.resolve("a.txt")).resolve("z"));
      peer.send(new ListRequest(4, "/", "a.txt"));
      ListResponse replaced = (ListResponse) peer.receive();
      assertEquals(List.of("a.txt/z", "b"),
          replaced.entries().stream().map(FileMeta::path).toList());
      peer.send(new ListRequest(3, "a", "b"));
      ErrorResponse e = (ErrorResponse) peer.receive();
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.message().contains("cursor 'b' is not a path below"), e.message());
    }
  }

  /**
   * A directory of many empty subdirectories and a file after them, 2 names a page: each page
   * reads the directory once and looks at 2 of its names (with the cursor's), so the listing
   * goes on over pages without a file; a symlink is left out even when it leads to a file
   * inside the root.
   */
  @Test
  void pagesWithoutFilesGoOnReadingEachDirectoryOnceAndSymlinksAreLeftOut(@TempDir Path root)
      throws IOException {
    Path d = Files.createDirectory(root.resolve("d"));
    for (int i = 0; i < 300; i++) {
      Files.createDirectory(d.resolve(String.format("e%03d", i)));
    }
    Files.createFile(d.resolve("zz"));
    Files.createSymbolicLink(d.resolve("zlink"), Path.of("zz"));
    List<long[]> pages = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxListPageEntries(2)
        .build().start();
        BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
            ClientConfig.builder().streams(1).transport("tcp").build())) {
      s.context().counters()
          .observeListingPages(walk -> pages.add(new long[] {walk.rereads(), walk.looked()}));
      assertEquals(List.of("d/zz"), c.list("/").stream().map(FileEntry::path).toList());
    }
    assertTrue(pages.size() >= 150, pages.size() + " pages");
    for (long[] page : pages) {
      assertEquals(0, page[0], "directories read again in a page");
      assertTrue(page[1] <= 2 + 3, page[1] + " names looked at in a page");
    }
  }

  /**
   * A page of nothing but names a listing leaves out has no entries, and names where the next
   * page goes on: after the last of them it passed.
   */
  @Test
  void aPageOfSymlinksOnlyEndsWithACursorAfterThem(@TempDir Path root) throws IOException {
    for (int i = 0; i < 5; i++) {
      Files.createSymbolicLink(root.resolve("link-" + i), Path.of("nowhere"));
    }
    Files.createFile(root.resolve("z"));
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxListPageEntries(3)
        .build().start(); RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      peer.send(new ListRequest(1, "/", ""));
      ListResponse first = (ListResponse) peer.receive();
      assertEquals(List.of(), first.entries());
      assertFalse(first.last());
      assertEquals("link-2", first.cursor());
      peer.send(new ListRequest(2, "/", first.cursor()));
      ListResponse second = (ListResponse) peer.receive();
      assertEquals(List.of("z"), second.entries().stream().map(FileMeta::path).toList());
      assertTrue(second.last());
    }
  }

  /** With every listing slot taken, a LIST waits its turn, then is refused, naming the limit. */
  @Test
  void aListWaitsForASlotThenIsRefused(@TempDir Path root) throws IOException {
    Files.createFile(root.resolve("f"));
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxConcurrentListings(1)
        .listingQueueTimeout(java.time.Duration.ofMillis(200)).build().start();
        RawPeer peer = new RawPeer(s.port())) {
      peer.handshake();
      try (ListingSlots.Slot held = s.context().listingSlots().acquire(s.address(), "/")) {
        peer.send(new ListRequest(1, "/", ""));
        ErrorResponse e = (ErrorResponse) peer.receive();
        assertEquals(ErrorCode.LIMIT_EXCEEDED, e.code());
        assertTrue(e.message().contains("1 listings in progress")
            && e.message().contains("--max-concurrent-listings"), e.message());
      }
      peer.send(new ListRequest(2, "/", ""));
      assertEquals(List.of("f"), ((ListResponse) peer.receive()).entries().stream()
          .map(FileMeta::path).toList());
    }
  }
}
