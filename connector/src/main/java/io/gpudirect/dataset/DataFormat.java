package io.gpudirect.dataset;

import io.gpudirect.GpuDirectException;
import java.util.Locale;

/** The file formats the source reads, chosen by option or by file extension. */
public enum DataFormat {
  PARQUET,
  ARROW_FILE,
  ARROW_STREAM;

  /** The format a file's extension names, or null for files that are not data (Spark's _SUCCESS etc.). */
  public static DataFormat fromExtension(String fileName) {
    String n = fileName.toLowerCase(Locale.ROOT);
    if (n.endsWith(".parquet")) {
      return PARQUET;
    }
    if (n.endsWith(".arrow") || n.endsWith(".arrow_file") || n.endsWith(".feather") || n.endsWith(".ipc")) {
      return ARROW_FILE;
    }
    if (n.endsWith(".arrows") || n.endsWith(".stream")) {
      return ARROW_STREAM;
    }
    return null;
  }

  /**
   * The format for a file under {@code option("format", ...)}. "arrow" covers both IPC
   * layouts: streams are told apart by extension, everything else is read as the file layout.
   */
  static DataFormat fromOption(String option, String fileName) {
    switch (option.toLowerCase(Locale.ROOT)) {
      case "parquet":
        return PARQUET;
      case "arrow":
      case "ipc":
        return fromExtension(fileName) == ARROW_STREAM ? ARROW_STREAM : ARROW_FILE;
      case "csv":
      case "json":
      case "orc":
        String reader = option.toLowerCase(Locale.ROOT);
        throw new GpuDirectException("format " + option + " is not read by the gpudirect format, which"
            + " reads parquet and arrow (Arrow IPC): read " + reader + " files with spark.read." + reader
            + "(\"gpudirect://HOST:PORT/PATH\"), Spark's own reader over the gpudirect:// file system");
      default:
        throw new GpuDirectException("Unknown format '" + option + "': expected parquet or arrow");
    }
  }

  public boolean isArrow() {
    return this != PARQUET;
  }
}
