package io.gpudirect.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * Spark's partition checksums are sent to reducers only where they describe the data files' bytes:
 * by default (ADLER32), with the algorithm set, and not with checksums off, with I/O encryption,
 * or where the unsafe writer's merge of spills compresses again.
 */
class WriterChecksumsTest {
  @Test
  void theWritersChecksumsAreUsedOnlyWhereTheyDescribeTheDataFiles() {
    assertEquals("ADLER32", WriterChecksums.algorithm(new SparkConf(false)));
    assertEquals("CRC32", WriterChecksums.algorithm(new SparkConf(false).set("spark.shuffle.checksum.algorithm", "CRC32")));
    assertEquals("ADLER32", WriterChecksums.algorithm(new SparkConf(false).set("spark.io.compression.codec", "zstd")));
    assertEquals("ADLER32", WriterChecksums.algorithm(new SparkConf(false).set("spark.shuffle.compress", "false")
        .set("spark.shuffle.unsafe.fastMergeEnabled", "false")));
    assertNull(WriterChecksums.algorithm(new SparkConf(false).set("spark.shuffle.checksum.enabled", "false")));
    assertNull(WriterChecksums.algorithm(new SparkConf(false).set("spark.io.encryption.enabled", "true")));
    assertNull(WriterChecksums.algorithm(new SparkConf(false).set("spark.shuffle.unsafe.fastMergeEnabled", "false")));
  }
}
