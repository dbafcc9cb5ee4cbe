package io.gpudirect.spark.read;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
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
 *
 * @param readerConf what Spark's Parquet read support and schema converter read from the
 *     Hadoop conf, set as Spark's own Parquet scan sets them: the requested schema among
 *     them. It travels here rather than in the broadcast conf, so that one broadcast serves
 *     every scan of a table, whatever columns each asks for.
 */
public record ParquetReadSettings(String sessionTimeZone, String datetimeRebaseModeInRead,
    String int96RebaseModeInRead, boolean int96TimestampConversion, boolean offHeap,
    int batchSize, boolean vectorized, Map<String, String> readerConf) implements Serializable {

  public ParquetReadSettings {
    readerConf = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(readerConf));
  }

  /** Sets {@link #readerConf()} in {@code conf}, a reader's own copy. */
  public void applyTo(Configuration conf) {
    readerConf.forEach(conf::set);
  }

  private static Map<String, String> readerConf(SQLConf sql, StructType readSchema) {
    String json = readSchema.json();
    Map<String, String> m = new LinkedHashMap<>();
    m.put(ParquetInputFormat.READ_SUPPORT_CLASS, ParquetReadSupport.class.getName());
    m.put(ParquetReadSupport$.MODULE$.SPARK_ROW_REQUESTED_SCHEMA(), json);
    m.put(ParquetWriteSupport$.MODULE$.SPARK_ROW_SCHEMA(), json);
    m.put(SQLConf.SESSION_LOCAL_TIMEZONE().key(), sql.sessionLocalTimeZone());
    m.put(SQLConf.NESTED_SCHEMA_PRUNING_ENABLED().key(), String.valueOf(sql.nestedSchemaPruningEnabled()));
    m.put(SQLConf.CASE_SENSITIVE().key(), String.valueOf(sql.caseSensitiveAnalysis()));
    m.put(SQLConf.PARQUET_BINARY_AS_STRING().key(), String.valueOf(sql.isParquetBinaryAsString()));
    m.put(SQLConf.PARQUET_INT96_AS_TIMESTAMP().key(), String.valueOf(sql.isParquetINT96AsTimestamp()));
    m.put(SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED().key(), String.valueOf(sql.parquetInferTimestampNTZEnabled()));
    m.put(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG().key(), String.valueOf(sql.legacyParquetNanosAsLong()));
    m.put(SQLConf.PARQUET_FIELD_ID_READ_ENABLED().key(), String.valueOf(sql.parquetFieldIdReadEnabled()));
    m.put(SQLConf.IGNORE_MISSING_PARQUET_FIELD_ID().key(), String.valueOf(sql.ignoreMissingParquetFieldId()));
    return m;
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
        vectorized,
        readerConf(conf, readSchema));
  }
}
