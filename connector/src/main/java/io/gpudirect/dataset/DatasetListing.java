package io.gpudirect.dataset;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns what the user passed to {@code load()} into the data files to read: each location is
 * a gpudirect URI, or a plain path read from every server of option {@code servers}.
 */
public final class DatasetListing {
  private DatasetListing() {}

  public static List<GpuDirectUri> locations(List<String> paths, ResolvedOptions options) {
    List<String> servers = options.servers();
    List<GpuDirectUri> locations = new ArrayList<>();
    for (String raw : paths) {
      for (String p : raw.split(",")) {
        String path = p.trim();
        if (path.isEmpty()) {
          continue;
        }
        if (path.regionMatches(true, 0, GpuDirectUri.SCHEME + "://", 0, GpuDirectUri.SCHEME.length() + 3)) {
          locations.add(GpuDirectUri.parse(path));
        } else if (!servers.isEmpty()) {
          for (String server : servers) {
            locations.add(GpuDirectUri.onServer(server, path));
          }
        } else {
          throw new GpuDirectException("Cannot read '" + path + "': expected gpudirect://HOST:PORT/PATH, "
              + "or a plain path with option servers=HOST:PORT[,HOST:PORT...]");
        }
      }
    }
    if (locations.isEmpty()) {
      throw new GpuDirectException("Nothing to read: pass gpudirect://HOST:PORT/PATH to load()");
    }
    return locations;
  }

  /**
   * The data files under every location. A directory holding files the source cannot read is
   * refused, naming them (see {@link UnreadableFiles}); option pathGlobFilter leaves them out.
   */
  public static List<DataFile> list(List<GpuDirectUri> locations, ResolvedOptions options) {
    String formatOption = options.format();
    String glob = options.pathGlobFilter();
    org.apache.hadoop.fs.GlobPattern nameFilter = glob.isEmpty() ? null : globPattern(glob);
    List<DataFile> files = new ArrayList<>();
    for (GpuDirectUri location : locations) {
      List<FileEntry> entries = RemoteStores.get(location, options).list(location.path());
      boolean single = entries.size() == 1 && entries.get(0).path().equals(location.path());
      List<DataFile> here = new ArrayList<>();
      List<String> unreadable = new ArrayList<>();
      for (FileEntry e : entries) {
        if (!single && isHidden(e.path(), location.path())) {
          continue;
        }
        if (nameFilter != null && !nameFilter.matches(UnreadableFiles.fileName(e.path()))) {
          continue;
        }
        GpuDirectUri uri = location.withPath(e.path());
        DataFormat format = formatOption.isEmpty()
            ? DataFormat.fromExtension(e.path())
            : DataFormat.fromOption(formatOption, e.path());
        if (format == null) {
          if (single) {
            throw UnreadableFiles.oneFile(uri, e.path());
          }
          unreadable.add(e.path());
          continue;
        }
        here.add(new DataFile(uri, e.length(), e.version(), format));
      }
      if (!unreadable.isEmpty() && !here.isEmpty()) {
        throw UnreadableFiles.besideDataFiles(location, here, unreadable);
      }
      if (!unreadable.isEmpty()) {
        throw UnreadableFiles.only(location, unreadable);
      }
      files.addAll(here);
    }
    if (files.isEmpty()) {
      throw new GpuDirectException("No data files found under " + locations
          + " (files starting with '_' or '.' are skipped"
          + (glob.isEmpty() ? "" : ", and those whose name does not match pathGlobFilter " + glob) + ")");
    }
    return files;
  }

  /** The glob syntax of Spark's pathGlobFilter (Hadoop's), matched against file names as there. */
  private static org.apache.hadoop.fs.GlobPattern globPattern(String glob) {
    try {
      return new org.apache.hadoop.fs.GlobPattern(glob);
    } catch (RuntimeException e) {
      throw new GpuDirectException("Invalid option pathGlobFilter '" + glob + "': " + e.getMessage(), e);
    }
  }

  /** Spark's convention: names starting with '_' or '.' below the location are not data. */
  private static boolean isHidden(String path, String location) {
    String rest = path.startsWith(location) ? path.substring(location.length()) : path;
    for (String part : rest.split("/")) {
      if (part.startsWith("_") || part.startsWith(".")) {
        return true;
      }
    }
    return false;
  }
}
