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

  /**
   * The data files under every location. A directory holding files the source cannot read
   * beside ones it can is refused, naming them, as {@code spark.read.parquet} fails on it:
   * reading only the files it knows would return part of the dataset without a word.
   */
  static List<DataFile> list(List<GpuDirectUri> locations, ResolvedOptions options) {
    String formatOption = options.get(GpuDirectOption.FORMAT);
    String glob = options.get(GpuDirectOption.PATH_GLOB_FILTER);
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
        if (nameFilter != null && !nameFilter.matches(fileName(e.path()))) {
          continue;
        }
        GpuDirectUri uri = location.withPath(e.path());
        DataFormat format = formatOption.isEmpty()
            ? DataFormat.fromExtension(e.path())
            : DataFormat.fromOption(formatOption, e.path());
        if (format == null) {
          if (single) {
            throw new GpuDirectException("Cannot read " + uri + ": the gpudirect format reads"
                + " Parquet and Arrow IPC, and this file's extension names neither. To read it, "
                + otherReader(List.of(e.path()), uri, false) + "; or, for a Parquet or Arrow file"
                + " without its extension, set option format to parquet or arrow");
          }
          unreadable.add(e.path());
          continue;
        }
        here.add(new DataFile(uri, e.length(), format));
      }
      if (!unreadable.isEmpty() && !here.isEmpty()) {
        throw new GpuDirectException("Cannot read " + location + ": beside its "
            + here.size() + " Parquet or Arrow IPC file(s) it holds " + unreadable.size()
            + " file(s) of another format (" + sample(unreadable) + "), as spark.read.parquet"
            + " would refuse it. To read only the Parquet and Arrow files, set option"
            + " pathGlobFilter to " + globFor(here) + "; to read the others, "
            + otherReader(unreadable, location, true));
      }
      if (!unreadable.isEmpty()) {
        throw new GpuDirectException("No Parquet or Arrow IPC files under " + location
            + " (the formats the gpudirect format reads); found " + unreadable.size()
            + " other file(s): " + sample(unreadable) + ". To read them, "
            + otherReader(unreadable, location, false) + "; or, for Parquet or Arrow files"
            + " without their extension, set option format to parquet or arrow");
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

  /**
   * How to read files the gpudirect format cannot: with Spark's own reader on the same URI,
   * which the gpudirect:// file system serves. {@code filtered}: keep that reader to them.
   */
  private static String otherReader(List<String> paths, GpuDirectUri location, boolean filtered) {
    java.util.Set<String> readers = new java.util.TreeSet<>();
    java.util.Set<String> extensions = new java.util.TreeSet<>();
    for (String p : paths) {
      String name = fileName(p).toLowerCase(java.util.Locale.ROOT);
      int dot = name.lastIndexOf('.');
      String ext = dot < 0 ? "" : name.substring(dot + 1);
      extensions.add(ext);
      readers.add(switch (ext) {
        case "csv", "tsv" -> "csv";
        case "json", "jsonl", "ndjson" -> "json";
        case "orc" -> "orc";
        case "txt", "text" -> "text";
        default -> "?";
      });
    }
    String reader = readers.size() == 1 ? readers.iterator().next() : "?";
    if (reader.equals("?") || (filtered && extensions.size() > 1)) {
      return "use Spark's own reader for their format (spark.read.csv, json, orc, text) on the same"
          + " URI, which the gpudirect:// file system serves" + (filtered ? ", with option pathGlobFilter" : "");
    }
    return "use Spark's own reader on the same URI, which the gpudirect:// file system serves: spark.read"
        + (filtered ? ".option(\"pathGlobFilter\", \"*." + extensions.iterator().next() + "\")" : "")
        + "." + reader + "(\"" + location + "\")";
  }

  /** A glob that keeps the readable files: their common extension when they share one. */
  private static String globFor(List<DataFile> files) {
    String ext = null;
    for (DataFile f : files) {
      String name = fileName(f.uri().path());
      int dot = name.lastIndexOf('.');
      String e = dot < 0 ? "" : name.substring(dot);
      if (ext != null && !ext.equals(e)) {
        return "a glob of their names";
      }
      ext = e;
    }
    return "\"*" + ext + "\"";
  }

  /** The glob syntax of Spark's pathGlobFilter (Hadoop's), matched against file names as there. */
  private static org.apache.hadoop.fs.GlobPattern globPattern(String glob) {
    try {
      return new org.apache.hadoop.fs.GlobPattern(glob);
    } catch (RuntimeException e) {
      throw new GpuDirectException("Invalid option pathGlobFilter '" + glob + "': " + e.getMessage(), e);
    }
  }

  private static String sample(List<String> paths) {
    int shown = Math.min(5, paths.size());
    return String.join(", ", paths.subList(0, shown))
        + (paths.size() > shown ? " and " + (paths.size() - shown) + " more" : "");
  }

  private static String fileName(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
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
