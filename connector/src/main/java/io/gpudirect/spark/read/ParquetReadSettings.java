package io.gpudirect.spark.read;

import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetInputFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport;
import org.apache.spark.sql.execution.datasources.parquet.ParquetUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * The session settings Spark's Parquet reader depends on, captured on the driver so that
 * executors read exactly as {@code spark.read.parquet} would in the same session.
 */
public record ParquetReadSettings(String sessionTimeZone, String datetimeRebaseModeInRead,
    String int96RebaseModeInRead, boolean int96TimestampConversion, boolean offHeap,
    int batchSize, boolean vectorized) implements Serializable {

  /**
   * Sets what Spark's Parquet read support and schema converter read from the Hadoop conf,
   * as Spark's own Parquet scan does.
   */
  public void requestSchema(Configuration conf, SQLConf sql, StructType readSchema) {
    String json = readSchema.json();
    conf.set(ParquetInputFormat.READ_SUPPORT_CLASS, ParquetReadSupport.class.getName());
    conf.set(ParquetReadSupport$.MODULE$.SPARK_ROW_REQUESTED_SCHEMA(), json);
    conf.set(ParquetWriteSupport$.MODULE$.SPARK_ROW_SCHEMA(), json);
    conf.set(SQLConf.SESSION_LOCAL_TIMEZONE().key(), sessionTimeZone);
    conf.setBoolean(SQLConf.NESTED_SCHEMA_PRUNING_ENABLED().key(), sql.nestedSchemaPruningEnabled());
    conf.setBoolean(SQLConf.CASE_SENSITIVE().key(), sql.caseSensitiveAnalysis());
    conf.setBoolean(SQLConf.PARQUET_BINARY_AS_STRING().key(), sql.isParquetBinaryAsString());
    conf.setBoolean(SQLConf.PARQUET_INT96_AS_TIMESTAMP().key(), sql.isParquetINT96AsTimestamp());
    conf.setBoolean(SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED().key(), sql.parquetInferTimestampNTZEnabled());
    conf.setBoolean(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG().key(), sql.legacyParquetNanosAsLong());
    conf.setBoolean(SQLConf.PARQUET_FIELD_ID_READ_ENABLED().key(), sql.parquetFieldIdReadEnabled());
    conf.setBoolean(SQLConf.IGNORE_MISSING_PARQUET_FIELD_ID().key(), sql.ignoreMissingParquetFieldId());
  }

  public static ParquetReadSettings from(SQLConf conf, StructType readSchema) {
    boolean vectorized = conf.parquetVectorizedReaderEnabled() && conf.wholeStageEnabled()
        && readSchema.length() <= conf.wholeStageMaxNumFields()
        && ParquetUtils.isBatchReadSupportedForSchema(conf, readSchema);
    return new ParquetReadSettings(
        conf.sessionLocalTimeZone(),
        conf.getConfString("spark.sql.parquet.datetimeRebaseModeInRead"),
        conf.getConfString("spark.sql.parquet.int96RebaseModeInRead"),
        conf.isParquetINT96TimestampConversion(),
        conf.offHeapColumnVectorEnabled(),
        conf.parquetVectorizedReaderBatchSize(),
        vectorized);
  }
}
