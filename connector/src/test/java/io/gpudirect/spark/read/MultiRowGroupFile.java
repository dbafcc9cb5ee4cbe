package io.gpudirect.spark.read;

import java.io.IOException;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/** A Parquet file of several row groups (the shared test files have one each), for slicing tests. */
public final class MultiRowGroupFile {
  static final MessageType SCHEMA = MessageTypeParser.parseMessageType(
      "message trips { required int64 id; optional double amount; optional binary zone (UTF8);"
          + " optional int32 day (DATE); }");
  static final int ROWS = 30_000;

  private MultiRowGroupFile() {}

  /** Writes {@link #ROWS} rows in row groups of about 32 KiB, with nulls and repeated strings. */
  public static Path write(Path path) throws IOException {
    SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new org.apache.hadoop.fs.Path(path.toUri()))
        .withConf(new Configuration(false)).withType(SCHEMA).withRowGroupSize(32L << 10)
        .withPageSize(8 << 10).withCompressionCodec(CompressionCodecName.SNAPPY).build()) {
      for (int i = 0; i < ROWS; i++) {
        Group g = groups.newGroup().append("id", (long) i);
        if (i % 7 != 0) {
          g.append("amount", i * 0.37);
        }
        if (i % 11 != 0) {
          g.append("zone", "zone-" + (i % 263));
        }
        if (i % 13 != 0) {
          g.append("day", 18_000 + i % 400);
        }
        w.write(g);
      }
    }
    return path;
  }
}
