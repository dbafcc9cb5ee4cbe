package io.gpudirect.spark.plan;

import io.gpudirect.GpuDirectException;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.hadoop.ExpectedVersion;
import io.gpudirect.hadoop.ReadPlan;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.compat.RowGroupFilter;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.Footer;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.sql.catalyst.util.RebaseDateTime;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFilters;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import scala.Option;

/**
 * Driver-side Parquet work: footers, schema, filter conversion, and slicing files into runs of
 * row groups whose statistics do not rule out the pushed filters.
 */
public final class ParquetPlanner {
  private final Configuration hadoopConf;
  private final SQLConf sqlConf;
  private final Map<String, ParquetMetadata> footers = new ConcurrentHashMap<>();

  public ParquetPlanner(Configuration hadoopConf, SQLConf sqlConf) {
    this.hadoopConf = hadoopConf;
    this.sqlConf = sqlConf;
  }

  public ParquetMetadata footer(DataFile file) {
    return footers.computeIfAbsent(file.uri().toString(), k -> {
      try {
        // The footer of the version listed, which the executors will read, or an error.
        Configuration conf = new Configuration(hadoopConf);
        ExpectedVersion.set(conf, k, file.version());
        return ParquetFileReader.readFooter(HadoopInputFile.fromPath(new Path(k), conf),
            ParquetMetadataConverter.NO_FILTER);
      } catch (IOException | RuntimeException e) {
        throw new GpuDirectException(k, "Cannot read Parquet footer of " + k + ": " + e.getMessage(), e);
      }
    });
  }

  /** The Spark schema of a file, as spark.read.parquet infers it (Spark's own schema if the writer stored one). */
  public StructType inferSchema(DataFile file) {
    ParquetMetadata footer = footer(file);
    try {
      return ParquetFileFormat.readSchemaFromFooter(new Footer(new Path(file.uri().toString()), footer),
          new ParquetToSparkSchemaConverter(sqlConf));
    } catch (RuntimeException e) {
      throw new GpuDirectException(file.uri().toString(), "Cannot read the schema of " + file.uri() + ": "
          + e.getMessage(), e);
    }
  }

  /** The filters that convert to a Parquet predicate against {@code file}'s schema. */
  public List<Filter> convertible(DataFile file, Filter[] filters) {
    ParquetFilters pf = parquetFilters(footer(file));
    List<Filter> ok = new ArrayList<>();
    for (Filter f : filters) {
      if (pf.createFilter(f).isDefined()) {
        ok.add(f);
      }
    }
    return ok;
  }

  /** Counts of row groups seen and skipped while slicing. */
  public static final class Counts {
    long rowGroups;
    long skipped;

    public long rowGroups() {
      return rowGroups;
    }

    public long skipped() {
      return skipped;
    }
  }

  public List<FileSlice> slice(DataFile file, List<Filter> pushed, long targetBytes, Counts counts) {
    return slice(file, pushed, targetBytes, counts, null);
  }

  /**
   * Runs of consecutive row groups that the pushed filters do not rule out, cut at the target
   * size. With {@code readSchema}, each slice also lists the column chunks those columns need.
   */
  public List<FileSlice> slice(DataFile file, List<Filter> pushed, long targetBytes, Counts counts, StructType readSchema) {
    ParquetMetadata footer = footer(file);
    Set<ColumnPath> columns = readSchema == null ? null : requestedColumns(footer, readSchema);
    List<BlockMetaData> blocks = footer.getBlocks();
    FilterPredicate predicate = predicate(footer, pushed);
    Set<BlockMetaData> kept = Collections.newSetFromMap(new IdentityHashMap<>());
    kept.addAll(predicate == null ? blocks : RowGroupFilter.filterRowGroups(FilterCompat.get(predicate),
        blocks, footer.getFileMetaData().getSchema()));
    counts.rowGroups += blocks.size();
    counts.skipped += blocks.size() - kept.size();

    Map<String, String> sparkMeta = new HashMap<>();
    footer.getFileMetaData().getKeyValueMetaData().forEach((k, v) -> {
      // The row metadata is the whole Spark schema; executors do not need it.
      if (k.startsWith("org.apache.spark.") && !k.equals("org.apache.spark.sql.parquet.row.metadata")) {
        sparkMeta.put(k, v);
      }
    });
    String createdBy = footer.getFileMetaData().getCreatedBy();

    List<FileSlice> slices = new ArrayList<>();
    int i = 0;
    while (i < blocks.size()) {
      if (!kept.contains(blocks.get(i))) {
        i++;
        continue;
      }
      long start = blocks.get(i).getStartingPos();
      long end = start;
      long rows = 0;
      int n = 0;
      // A run of consecutive surviving row groups, cut at the target size.
      while (i < blocks.size() && kept.contains(blocks.get(i))
          && (n == 0 || end - start + blocks.get(i).getCompressedSize() <= targetBytes)) {
        BlockMetaData b = blocks.get(i);
        end = b.getStartingPos() + b.getCompressedSize();
        rows += b.getRowCount();
        n++;
        i++;
      }
      slices.add(new ParquetSlice(file, start, end - start, n, rows, predicate, sparkMeta, createdBy,
          chunkRanges(blocks.subList(i - n, i), columns)));
    }
    return slices;
  }

  /**
   * The Parquet columns Spark's reader asks for, as it decides them (same clipping); null when
   * the schema cannot be clipped, and then no slice lists its chunks.
   */
  private Set<ColumnPath> requestedColumns(ParquetMetadata footer, StructType readSchema) {
    try {
      MessageType clipped = ParquetReadSupport$.MODULE$.clipParquetSchema(footer.getFileMetaData().getSchema(),
          readSchema, sqlConf.caseSensitiveAnalysis(), sqlConf.parquetFieldIdReadEnabled());
      Set<ColumnPath> paths = new HashSet<>();
      for (ColumnDescriptor c : clipped.getColumns()) {
        paths.add(ColumnPath.get(c.getPath()));
      }
      return paths;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * Offset and length pairs of the chunks of {@code columns} in {@code blocks}, sorted and
   * with touching chunks merged; null when unknown or when the footer's chunks overlap (a
   * reader of such a file gets its error from Parquet, not from here).
   */
  private static long[] chunkRanges(List<BlockMetaData> blocks, Set<ColumnPath> columns) {
    if (columns == null) {
      return null;
    }
    List<long[]> chunks = new ArrayList<>();
    for (BlockMetaData b : blocks) {
      for (ColumnChunkMetaData c : b.getColumns()) {
        if (columns.contains(c.getPath()) && c.getTotalSize() > 0) {
          chunks.add(new long[] {c.getStartingPos(), c.getTotalSize()});
        }
      }
    }
    chunks.sort(Comparator.comparingLong(r -> r[0]));
    try {
      return ReadPlan.of("", chunks).ranges();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private FilterPredicate predicate(ParquetMetadata footer, List<Filter> pushed) {
    if (pushed.isEmpty()) {
      return null;
    }
    ParquetFilters pf = parquetFilters(footer);
    FilterPredicate result = null;
    for (Filter f : pushed) {
      Option<FilterPredicate> p = pf.createFilter(f);
      if (p.isDefined()) {
        result = result == null ? p.get() : FilterApi.and(result, p.get());
      }
    }
    return result;
  }

  private ParquetFilters parquetFilters(ParquetMetadata footer) {
    MessageType schema = footer.getFileMetaData().getSchema();
    Map<String, String> kv = footer.getFileMetaData().getKeyValueMetaData();
    RebaseDateTime.RebaseSpec rebase = DataSourceUtils.datetimeRebaseSpec(
        new MetadataLookup(kv), sqlConf.getConfString("spark.sql.parquet.datetimeRebaseModeInRead"));
    return new ParquetFilters(schema, sqlConf.parquetFilterPushDownDate(),
        sqlConf.parquetFilterPushDownTimestamp(), sqlConf.parquetFilterPushDownDecimal(),
        sqlConf.parquetFilterPushDownStringPredicate(), sqlConf.parquetFilterPushDownInFilterThreshold(),
        sqlConf.caseSensitiveAnalysis(), rebase);
  }
}
