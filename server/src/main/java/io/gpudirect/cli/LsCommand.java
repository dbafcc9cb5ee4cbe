package io.gpudirect.cli;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.client.ListingLimitException;
import io.gpudirect.client.RemoteStore;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "ls", mixinStandardHelpOptions = true, description = {
    "List the files below a gpudirect:// path: size and URI, one a line, in the server's order.",
    "Control characters in names are escaped as GNU ls -b does (\\n, \\t, \\033 for ESC,"
        + " \\\\ for a backslash), and so are Unicode's direction overrides and other invisible"
        + " format characters (\\342\\200\\256 for U+202E), so a name cannot move the cursor,"
        + " retitle the terminal or show as another name."})
final class LsCommand implements Callable<Integer> {
  @Parameters(paramLabel = "URI", description = "gpudirect://HOST:PORT/PATH")
  String uri;

  @Mixin
  ClientOptions client;

  @Option(names = "--max-entries", paramLabel = "N",
      description = "Most files a listing may have: 1 to 2147483647 (default 1,000,000); past it the listing fails.")
  Integer maxEntries;

  @Override
  public Integer call() {
    GpuDirectUri location = GpuDirectUri.parse(uri);
    List<FileEntry> files;
    ClientConfig.Builder config = client.config();
    if (maxEntries != null) {
      config.maxListEntries(OptionValues.count("--max-entries", maxEntries, 1, Integer.MAX_VALUE));
    }
    try (RemoteStore store = ClientOptions.connect(location, config)) {
      files = store.list(location.path());
    } catch (ListingLimitException e) {
      // The client's message names the Spark option; on this command line it is a flag.
      if (e.limit() == ListingLimitException.Limit.ENTRIES) {
        throw new ListingLimitException(e.limit(), e.getMessage() + "; for gpudirect ls: --max-entries N");
      }
      throw e;
    }
    for (FileEntry e : files) {
      System.out.printf("%14d  %s%n", e.length(),
          TerminalText.escape(location.withPath(e.path()).toString()));
    }
    return 0;
  }
}
