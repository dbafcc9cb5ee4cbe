package io.gpudirect.spark.arrow;

import io.gpudirect.arrow.ArrowFormatException;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Resolves Spark's required columns to positions in the file's schema. */
final class ColumnSelection {
  private ColumnSelection() {}

  /**
   * For each field of {@code required}, the position of the first top-level field of
   * {@code available} with that exact name; its type must be unchanged but for nullability
   * (nested pruning is not supported, so a scan must not offer it).
   *
   * @throws ArrowFormatException when the file has several top-level columns of a wanted name
   */
  static int[] indices(StructType available, StructType required, String displayName) {
    StructField[] fields = available.fields();
    int[] indices = new int[required.size()];
    for (int i = 0; i < indices.length; i++) {
      StructField wanted = required.fields()[i];
      indices[i] = -1;
      for (int j = 0; j < fields.length && indices[i] < 0; j++) {
        if (fields[j].name().equals(wanted.name())) {
          indices[i] = j;
        }
      }
      long sameName = java.util.Arrays.stream(fields).filter(f -> f.name().equals(wanted.name())).count();
      if (sameName > 1) {
        // Arrow allows it; Spark addresses columns by name, so it could pick the wrong one.
        throw new ArrowFormatException(displayName, "it has " + sameName + " top-level columns named '"
            + wanted.name() + "', and Spark reads columns by name");
      }
      if (indices[i] < 0) {
        throw new IllegalArgumentException("column '" + wanted.name() + "' is not in " + displayName
            + ", whose columns are " + String.join(", ", available.fieldNames()));
      }
      // Spark's file sources ask for every column as nullable, at every level.
      if (!DataType.equalsIgnoreNullability(fields[indices[i]].dataType(), wanted.dataType())) {
        throw new IllegalArgumentException("column '" + wanted.name() + "' of " + displayName + " is "
            + fields[indices[i]].dataType().simpleString() + ", not " + wanted.dataType().simpleString());
      }
    }
    return indices;
  }
}
