package io.gpudirect.it;

import org.apache.spark.sql.SparkSession;

/** The small job {@link SparkSubmitIT} submits: reads a gpudirect:// path and prints the row count. */
public final class SubmitApp {
  private SubmitApp() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("gpudirect-submit-test").getOrCreate();
    long rows = spark.read().format("gpudirect").load(args[0]).count();
    System.out.println("gpudirect rows=" + rows);
    spark.stop();
  }
}
