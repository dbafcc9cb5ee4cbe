package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.protocol.ListingOrder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A listing costs what it passes over, whatever the directory holds: names that are not listed
 * (symlinks here) take a page's budget as files do, and a page reads each directory once.
 * Before, a directory of 100,000 symlinks and 9,999 files took 65 s for one page, which read
 * the directory again for every 256 names once the page was nearly full.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListingCostTest {
  static final int SYMLINKS = 20_000;
  static final int FILES = 300;
  static final int PAGE = 1000;

  /** What one page cost. */
  record Cost(long namesRead, long looked, int directoryReads, int rereads) {}

  @Test
  void aDirectoryOfSymlinksIsListedAPageBudgetAtATimeReadingEachDirectoryOncePerPage(
      @TempDir Path root) throws IOException {
    // Files spread among the links, a subdirectory of links among them too.
    Path d = Files.createDirectory(root.resolve("d"));
    Path sub = Files.createDirectory(d.resolve("m-sub"));
    for (int i = 0; i < SYMLINKS; i++) {
      Path dir = i % 10 == 0 ? sub : d;
      Files.createSymbolicLink(dir.resolve(String.format("%c-link-%05d", 'a' + i % 26, i)),
          Path.of("nowhere"));
    }
    for (int i = 0; i < FILES; i++) {
      Files.writeString(d.resolve(String.format("%c-file-%03d", 'a' + i % 26, i)), "x".repeat(i));
      if (i % 10 == 0) {
        Files.writeString(sub.resolve("file-" + i), "y");
      }
    }
    List<String> expected;
    try (Stream<Path> walk = Files.walk(root)) {
      expected = walk.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
          .map(p -> root.relativize(p).toString()).sorted(ListingOrder.INSTANCE).toList();
    }

    List<Cost> pages = new CopyOnWriteArrayList<>();
    try (BlockServer s = BlockServer.builder().root(root).port(0).maxListPageEntries(PAGE)
        .build().start();
        BlockClient c = BlockClient.connect(new InetSocketAddress("127.0.0.1", s.port()),
            ClientConfig.builder().streams(1).transport("tcp").build())) {
      s.context().counters().observeListingPages(walk -> pages.add(new Cost(walk.namesRead(),
          walk.looked(), walk.directoryReads(), walk.rereads())));
      assertEquals(expected, c.list("/").stream().map(FileEntry::path).toList());
    }

    long allNames = SYMLINKS + FILES + FILES / 10 + 2;
    for (int i = 0; i < pages.size(); i++) {
      Cost c = pages.get(i);
      assertEquals(0, c.rereads(), "page " + i + " read a directory again: " + c);
      // The root, d and m-sub: each read at most once, whatever the page held.
      assertTrue(c.directoryReads() <= 3, "page " + i + ": " + c);
      assertTrue(c.namesRead() <= allNames, "page " + i + ": " + c);
      // A page's budget, plus a look at each name of the cursor on the way down to it.
      assertTrue(c.looked() <= PAGE + 3, "page " + i + ": " + c);
    }
    // It went on after pages that listed no file: every name is looked at about once in all.
    long looked = pages.stream().mapToLong(Cost::looked).sum();
    assertTrue(looked <= allNames + 3L * pages.size(), looked + " looks in " + pages.size() + " pages");
    System.out.printf("ListingCostTest: %d pages; names read per page, first %d, largest %d;"
        + " looked at per page, largest %d%n", pages.size(), pages.get(0).namesRead(),
        pages.stream().mapToLong(Cost::namesRead).max().orElseThrow(),
        pages.stream().mapToLong(Cost::looked).max().orElseThrow());
  }
}
