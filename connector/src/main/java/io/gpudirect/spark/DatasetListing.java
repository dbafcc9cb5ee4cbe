package io.gpudirect.spark;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.FileEntry;
import io.gpudirect.options.GpuDirectOption;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.GpuDirectUri;
import io.gpudirect.remote.RemoteStores;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns what the user passed to {@code load()} into the data files to read: each location is
 * a gpudirect URI, or a plain path read from every server of option {@code servers}.
 */
final class DatasetListing {
  private DatasetListing() {}

  static List<GpuDirectUri> locations(List<String> paths, ResolvedOptions options) {
    String servers = options.get(GpuDirectOption.SERVERS);
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
          for (String server : servers.split(",")) {
            if (!server.isBlank()) {
              locations.add(GpuDirectUri.onServer(server, path));
            }
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

  static List<DataFile> list(List<GpuDirectUri> locations, ResolvedOptions options) {
    String formatOption = options.get(GpuDirectOption.FORMAT);
    List<DataFile> files = new ArrayList<>();
    for (GpuDirectUri location : locations) {
      List<FileEntry> entries = RemoteStores.get(location, options).list(location.path());
      boolean single = entries.size() == 1 && entries.get(0).path().equals(location.path());
      for (FileEntry e : entries) {
        if (!single && isHidden(e.path(), location.path())) {
          continue;
        }
        GpuDirectUri uri = location.withPath(e.path());
        DataFormat format = formatOption.isEmpty()
            ? DataFormat.fromExtension(e.path())
            : DataFormat.fromOption(formatOption, e.path());
        if (format == null) {
          if (single) {
            throw new GpuDirectException("Cannot read " + uri + ": unknown file extension. "
                + "Set option format to parquet or arrow");
          }
          continue;
        }
        files.add(new DataFile(uri, e.length(), e.version(), format));
      }
    }
    if (files.isEmpty()) {
      throw new GpuDirectException("No data files found under " + locations
          + " (files starting with '_' or '.' are skipped; set option format if the files lack an extension)");
    }
    return files;
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
