package io.gpudirect.spark.plan;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.dataset.DataFile;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCoercion$;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils$;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.DateFormatter;
import org.apache.spark.sql.catalyst.util.DateFormatter$;
import org.apache.spark.sql.catalyst.util.LegacyDateFormats$;
import org.apache.spark.sql.catalyst.util.TimestampFormatter;
import org.apache.spark.sql.catalyst.util.TimestampFormatter$;
import org.apache.spark.sql.execution.datasources.PartitioningUtils$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;

/**
 * Partition columns from Hive-style directory names ({@code trips/year=2024/month=7/part-0}),
 * discovered as Spark's file sources discover them: the same walk from each file's directory
 * up to the base path, the same type inference and widening, the same casts (Spark's own
 * {@code PartitioningUtils} functions, so that values equal {@code spark.read.parquet}'s), and
 * the same refusal of directories that disagree on the columns. Driver only; executors get each
 * file's values with their task ({@link GpuDirectPartition#values}).
 */
public final class DirectoryPartitioning {
  /** No partition columns: a location whose files sit in no key=value directory. */
  public static final DirectoryPartitioning NONE = new DirectoryPartitioning(new StructType(), Map.of());

  private final StructType columns;
  /** Each file's values in {@link #columns}' order, by its URI. */
  private final Map<String, InternalRow> values;

  private DirectoryPartitioning(StructType columns, Map<String, InternalRow> values) {
    this.columns = columns;
    this.values = values;
  }

  public StructType columns() {
    return columns;
  }

  public boolean isEmpty() {
    return columns.fields().length == 0;
  }

  /** Whether {@code name} is a partition column. */
  public boolean isColumn(String name, boolean caseSensitive) {
    return find(columns, name, caseSensitive) != null;
  }

  public InternalRow values(DataFile file) {
    return values.get(file.uri().toString());
  }

  /**
   * The partition columns of {@code files}, each listed under one of {@code locations}. A
   * location that named a single file has none, as in Spark. {@code basePath} (option
   * basePath; empty: each location) is where directories start to count.
   */
  public static DirectoryPartitioning discover(List<DataFile> files, List<GpuDirectUri> locations,
      String basePath, StructType userSchema, SQLConf conf) {
    boolean caseSensitive = conf.caseSensitiveAnalysis();
    Map<String, List<String[]>> byDirectory = new LinkedHashMap<>();
    Map<String, String> directoryOf = new HashMap<>();
    for (DataFile f : files) {
      String dir = directory(f.uri().path());
      String base = base(f.uri(), locations, basePath);
      directoryOf.put(f.uri().toString(), dir);
      if (base != null && !byDirectory.containsKey(dir)) {
        byDirectory.put(dir, columnsOf(relative(dir, base)));
      }
    }
    List<String> names = null;
    String namesFrom = null;
    for (Map.Entry<String, List<String[]>> e : byDirectory.entrySet()) {
      List<String> here = new ArrayList<>();
      for (String[] kv : e.getValue()) {
        here.add(caseSensitive ? kv[0] : kv[0].toLowerCase(Locale.ROOT));
      }
      if (names == null) {
        names = here;
        namesFrom = e.getKey();
      } else if (!names.equals(here)) {
        throw new GpuDirectException("Conflicting partition directories: " + where(namesFrom) + " has partition columns "
            + names + " but " + where(e.getKey()) + " has " + here + ". Data files must live only in leaf directories,"
            + " and directories at one level must name the same column (key=value); option basePath says where they start");
      }
    }
    if (names == null || names.isEmpty()) {
      return NONE;
    }
    String zone = conf.sessionLocalTimeZone();
    ZoneId zoneId = ZoneId.of(zone);
    List<String[]> first = byDirectory.values().iterator().next();
    StructField[] fields = new StructField[first.size()];
    for (int i = 0; i < fields.length; i++) {
      String name = first.get(i)[0];
      DataType type = userType(userSchema, name, caseSensitive);
      if (type == null) {
        type = inferredType(byDirectory.values(), i, conf, zoneId);
      }
      fields[i] = DataTypes.createStructField(name, type, true);
    }
    StructType columns = new StructType(fields);
    Map<String, InternalRow> rowsByDirectory = new HashMap<>();
    for (Map.Entry<String, List<String[]>> e : byDirectory.entrySet()) {
      rowsByDirectory.put(e.getKey(), row(columns, e.getValue(), zoneId, conf.validatePartitionColumns(), e.getKey()));
    }
    Map<String, InternalRow> values = new HashMap<>();
    for (DataFile f : files) {
      InternalRow row = rowsByDirectory.get(directoryOf.get(f.uri().toString()));
      if (row == null) {
        // A single file named by its location, beside partition directories of another.
        throw new GpuDirectException("Cannot read " + f.uri() + " with the partition directories " + names
            + " of the other locations: load it separately, or its directory");
      }
      values.put(f.uri().toString(), row);
    }
    return new DirectoryPartitioning(columns, values);
  }

  /**
   * Spark's merge of a file schema and partition columns: a partition column the files also
   * hold stays where the files have it, with the partition's type (its values come from the
   * directory); the others follow the file columns.
   */
  public StructType tableSchema(StructType dataSchema, boolean caseSensitive) {
    List<StructField> out = new ArrayList<>();
    List<String> overlapping = new ArrayList<>();
    for (StructField f : dataSchema.fields()) {
      StructField p = find(columns, f.name(), caseSensitive);
      out.add(p != null ? p : f);
      if (p != null) {
        overlapping.add(p.name());
      }
    }
    for (StructField p : columns.fields()) {
      if (!overlapping.contains(p.name())) {
        out.add(p);
      }
    }
    return new StructType(out.toArray(new StructField[0]));
  }

  /** The fields of {@code schema} that are not partition columns: what the files are read for. */
  public StructType dataPart(StructType schema, boolean caseSensitive) {
    List<StructField> out = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (find(columns, f.name(), caseSensitive) == null) {
        out.add(f);
      }
    }
    return new StructType(out.toArray(new StructField[0]));
  }

  static StructField find(StructType schema, String name, boolean caseSensitive) {
    for (StructField f : schema.fields()) {
      if (caseSensitive ? f.name().equals(name) : f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /** The path a location's directories count from, or null where its files have no partition columns. */
  private static String base(GpuDirectUri file, List<GpuDirectUri> locations, String basePath) {
    for (GpuDirectUri location : locations) {
      if (!location.authority().equals(file.authority()) || !under(file.path(), location.path())) {
        continue;
      }
      if (file.path().equals(location.path())) {
        return null;
      }
      if (basePath.isEmpty()) {
        return location.path();
      }
      String base = GpuDirectUri.onServer(location.authority(), basePath).path();
      if (basePath.regionMatches(true, 0, GpuDirectUri.SCHEME + "://", 0, GpuDirectUri.SCHEME.length() + 3)) {
        base = GpuDirectUri.parse(basePath).path();
      }
      if (!under(location.path(), base)) {
        throw new GpuDirectException("Option basePath " + basePath + " is not a directory above "
            + location + ": it must be the loaded path or one of its parents");
      }
      return base;
    }
    return null;
  }

  private static boolean under(String path, String dir) {
    return dir.isEmpty() || path.equals(dir) || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
  }

  private static String directory(String path) {
    int slash = path.lastIndexOf('/');
    return slash < 0 ? "" : path.substring(0, slash);
  }

  private static String relative(String dir, String base) {
    String b = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    return dir.length() <= b.length() ? "" : dir.substring(b.isEmpty() ? 0 : b.length() + 1);
  }

  /**
   * The key=value names of a directory below its base, walking up from the leaf as Spark does:
   * a name that is not key=value is passed over until a column is found, and ends the walk after.
   */
  private static List<String[]> columnsOf(String relative) {
    List<String[]> found = new ArrayList<>();
    if (relative.isEmpty()) {
      return found;
    }
    String[] names = relative.split("/");
    for (int i = names.length - 1; i >= 0; i--) {
      String[] kv = keyValue(names[i]);
      if (kv == null && !found.isEmpty()) {
        break;
      }
      if (kv != null) {
        found.add(0, kv);
      }
    }
    return found;
  }

  private static String[] keyValue(String name) {
    int eq = name.indexOf('=');
    if (eq < 0) {
      return null;
    }
    String key = ExternalCatalogUtils$.MODULE$.unescapePathName(name.substring(0, eq));
    String raw = name.substring(eq + 1);
    if (key.isEmpty() || raw.isEmpty()) {
      throw new GpuDirectException("Empty partition column " + (key.isEmpty() ? "name" : "value")
          + " in directory name '" + name + "'");
    }
    return new String[] {key, raw};
  }

  private static DataType userType(StructType userSchema, String name, boolean caseSensitive) {
    if (userSchema == null) {
      return null;
    }
    StructField f = find(userSchema, name, caseSensitive);
    return f == null ? null : f.dataType();
  }

  /** Spark's inference per directory, widened over all of them; a column only of nulls is a string. */
  private static DataType inferredType(Iterable<List<String[]>> directories, int column, SQLConf conf, ZoneId zone) {
    boolean inference = conf.partitionColumnTypeInferenceEnabled();
    DateFormatter dates = DateFormatter$.MODULE$.apply(DateFormatter$.MODULE$.defaultPattern(),
        DateFormatter$.MODULE$.defaultLocale(), LegacyDateFormats$.MODULE$.FAST_DATE_FORMAT(), true);
    TimestampFormatter timestamps = TimestampFormatter$.MODULE$.apply(
        PartitioningUtils$.MODULE$.timestampPartitionPattern(), zone, true);
    DataType type = DataTypes.NullType;
    for (List<String[]> d : directories) {
      DataType t = PartitioningUtils$.MODULE$.inferPartitionColumnValue(d.get(column)[1], inference, zone, dates, timestamps);
      type = wider(type, t);
    }
    return type == DataTypes.NullType ? DataTypes.StringType : type;
  }

  /** Spark's widening for partition columns: no precision lost between doubles and longs or decimals. */
  private static DataType wider(DataType a, DataType b) {
    boolean aDouble = a == DataTypes.DoubleType;
    boolean bDouble = b == DataTypes.DoubleType;
    if ((aDouble && (b instanceof DecimalType || b == DataTypes.LongType))
        || (bDouble && (a instanceof DecimalType || a == DataTypes.LongType))) {
      return DataTypes.StringType;
    }
    Option<DataType> w = TypeCoercion$.MODULE$.findWiderTypeForTwo(a, b);
    return w.isDefined() ? w.get() : DataTypes.StringType;
  }

  private static InternalRow row(StructType columns, List<String[]> kvs, ZoneId zone, boolean validate, String dir) {
    Object[] v = new Object[kvs.size()];
    for (int i = 0; i < v.length; i++) {
      String raw = kvs.get(i)[1];
      DataType type = columns.fields()[i].dataType();
      try {
        v[i] = PartitioningUtils$.MODULE$.castPartValueToDesiredType(type, raw, zone);
      } catch (RuntimeException e) {
        v[i] = null;
      }
      if (v[i] == null && validate && !raw.equals(ExternalCatalogUtils$.MODULE$.DEFAULT_PARTITION_NAME())) {
        throw new GpuDirectException("Partition directory " + where(dir) + ": value '" + raw + "' of column "
            + columns.fields()[i].name() + " is not a " + type.simpleString()
            + " (set spark.sql.sources.validatePartitionColumns=false to read it as null)");
      }
    }
    return new GenericInternalRow(v);
  }

  private static String where(String dir) {
    return dir.isEmpty() ? "/" : dir;
  }
}
