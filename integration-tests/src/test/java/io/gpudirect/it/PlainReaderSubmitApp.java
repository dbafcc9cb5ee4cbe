package io.gpudirect.it;

import org.apache.spark.sql.SparkSession;

/**
 * The job {@link PlainReaderSubmitIT} submits: Spark's own Parquet and CSV readers on
 * gpudirect:// paths, with no gpudirect setting at all.
 */
public final class PlainReaderSubmitApp {
  private PlainReaderSubmitApp() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("gpudirect-plain-reader").getOrCreate();
    long parquet = spark.read().parquet(args[0]).count();
    long csv = spark.read().option("header", "true").csv(args[1]).count();
    System.out.println("plain parquet rows=" + parquet + " csv rows=" + csv);
    spark.stop();
  }
}
