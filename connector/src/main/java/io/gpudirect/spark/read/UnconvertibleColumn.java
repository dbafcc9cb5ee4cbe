package io.gpudirect.spark.read;

import java.util.Optional;
import org.apache.spark.sql.execution.datasources.SchemaColumnConvertNotSupportedException;

/**
 * A Parquet column that Spark's vectorized reader cannot turn into the type the schema gives it
 * (a decimal stored as a byte array, say: spark.read.parquet refuses it too). Its row-based
 * reader can; the message says so, naming the file and the column.
 */
public final class UnconvertibleColumn {
  private UnconvertibleColumn() {}

  /** What to tell the user, when {@code failure} or a cause of it is Spark's refusal of a column. */
  public static Optional<String> message(String file, Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SchemaColumnConvertNotSupportedException e) {
        return Optional.of("Cannot read column " + e.getColumn() + " of " + file + ": it is stored as "
            + e.getPhysicalType() + ", which Spark's vectorized Parquet reader cannot read as " + e.getLogicalType()
            + " (spark.read.parquet cannot either). Read it with Spark's row-based reader: set"
            + " spark.sql.parquet.enableVectorizedReader=false in the session");
      }
    }
    return Optional.empty();
  }
}
