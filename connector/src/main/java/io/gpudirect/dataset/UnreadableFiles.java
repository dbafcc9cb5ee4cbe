package io.gpudirect.dataset;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.GpuDirectUri;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Files under a location that the gpudirect format cannot read (neither Parquet nor Arrow
 * IPC), and what to tell the user about them: which files, and the reader that does read
 * them, which is Spark's own over the same gpudirect:// URI.
 */
final class UnreadableFiles {
  private UnreadableFiles() {}

  /** One named file whose extension names no format of ours. */
  static GpuDirectException oneFile(GpuDirectUri uri, String path) {
    return new GpuDirectException(uri.toString(), "Cannot read " + uri + ": the gpudirect format reads"
        + " Parquet and Arrow IPC, and this file's extension names neither. To read it, "
        + otherReader(List.of(path), uri, false) + "; or, for a Parquet or Arrow file without its"
        + " extension, set option format to parquet or arrow", null);
  }

  /**
   * A directory with files of ours beside others: refused as {@code spark.read.parquet} refuses
   * it, since reading ours alone would return part of the dataset without a word.
   */
  static GpuDirectException besideDataFiles(GpuDirectUri location, List<DataFile> readable,
      List<String> unreadable) {
    return new GpuDirectException("Cannot read " + location + ": beside its " + readable.size()
        + " Parquet or Arrow IPC file(s) it holds " + unreadable.size() + " file(s) of another"
        + " format (" + sample(unreadable) + "), as spark.read.parquet would refuse it. To read only"
        + " the Parquet and Arrow files, set option pathGlobFilter to " + globFor(readable)
        + "; to read the others, " + otherReader(unreadable, location, true));
  }

  /** A directory with no file of ours at all. */
  static GpuDirectException only(GpuDirectUri location, List<String> unreadable) {
    return new GpuDirectException("No Parquet or Arrow IPC files under " + location
        + " (the formats the gpudirect format reads); found " + unreadable.size()
        + " other file(s): " + sample(unreadable) + ". To read them, "
        + otherReader(unreadable, location, false) + "; or, for Parquet or Arrow files without"
        + " their extension, set option format to parquet or arrow");
  }

  /** Spark's reader for these files on {@code location}; {@code filtered}: kept to them alone. */
  private static String otherReader(List<String> paths, GpuDirectUri location, boolean filtered) {
    Set<String> readers = new TreeSet<>();
    Set<String> extensions = new TreeSet<>();
    for (String p : paths) {
      String name = fileName(p).toLowerCase(Locale.ROOT);
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

  private static String sample(List<String> paths) {
    int shown = Math.min(5, paths.size());
    return String.join(", ", paths.subList(0, shown))
        + (paths.size() > shown ? " and " + (paths.size() - shown) + " more" : "");
  }

  static String fileName(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }
}
