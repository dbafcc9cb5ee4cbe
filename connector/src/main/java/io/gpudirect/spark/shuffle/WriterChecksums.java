package io.gpudirect.spark.shuffle;

import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec$;

/**
 * Whether the partition checksums Spark's shuffle writers keep ({@code spark.shuffle.checksum.*},
 * on by default) describe the bytes of the data files, so that an executor's server may send
 * them to reducers to check the blocks against, instead of a CRC32C of its own.
 *
 * <p>They are computed as the writer writes each partition's bytes (Spark 3.5.8 and 4.0.4:
 * {@code DiskBlockObjectWriter}'s checked stream under the serializer and codec). One writer
 * then writes other bytes: the unsafe writer, merging two or more spills, keeps the spills'
 * checksums, which are those of the merged file only where the merge concatenates the spills'
 * bytes. It decodes and encodes them again, so the checksums differ from the file (which Spark,
 * reading them only to diagnose a corruption already found, never notices), when blocks are
 * encrypted ({@code spark.io.encryption.enabled}: each partition gets a new IV), and when they
 * are compressed with {@code spark.shuffle.unsafe.fastMergeEnabled=false} or with a codec whose
 * streams do not concatenate (none of Spark's own). Then the servers send CRC32C, as without
 * checksums.
 */
final class WriterChecksums {
  private WriterChecksums() {}

  /** Spark's name of the algorithm whose checksums describe the data files; null where none do. */
  static String algorithm(SparkConf conf) {
    if (!conf.getBoolean("spark.shuffle.checksum.enabled", true)
        || conf.getBoolean("spark.io.encryption.enabled", false)) {
      return null;
    }
    if (conf.getBoolean("spark.shuffle.compress", true)
        && (!conf.getBoolean("spark.shuffle.unsafe.fastMergeEnabled", true)
            || !CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(
                CompressionCodec$.MODULE$.createCodec(conf)))) {
      return null;
    }
    return conf.get("spark.shuffle.checksum.algorithm", "ADLER32");
  }
}
