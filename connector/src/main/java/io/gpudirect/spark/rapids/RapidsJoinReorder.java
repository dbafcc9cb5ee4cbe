package io.gpudirect.spark.rapids;

import io.gpudirect.spark.DeviceScans;
import java.lang.reflect.Constructor;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.internal.StaticSQLConf;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * The RAPIDS Accelerator's join reordering ({@code JoinReorderRule}, on by default: its
 * {@code spark.rapids.sql.optimizer.joinReorder.enabled}) for joins of gpudirect tables. The
 * plugin joins a fact table to its filtered dimensions first, but only where every table is a V1
 * file relation, so over {@code format("gpudirect")} it left TPC-H's q7 in the query's order and
 * joined the 60 M rows of lineitem to all of orders before customer (1.32x the time over local
 * files on the lab's H100 at SF 10). Here the plugin's own rule runs over the plan with each
 * gpudirect relation standing in as the V1 relation {@code spark.read.parquet} of the same files
 * would be (its columns, and the files' bytes as its size), and the relations go back where the
 * rule put their stand-ins; so both read paths are joined in one order. Does nothing where the
 * plugin's optimizer extension is not in the session, or its rule cannot be loaded.
 */
final class RapidsJoinReorder extends Rule<LogicalPlan> {
  private static final Logger LOG = LoggerFactory.getLogger(RapidsJoinReorder.class);
  static final String PLUGIN_EXTENSION = "com.nvidia.spark.rapids.optimizer.SQLOptimizerPlugin";
  static final String PLUGIN_RULE = "com.nvidia.spark.rapids.optimizer.JoinReorderRule";

  private final SparkSession session;
  private Rule<LogicalPlan> pluginRule;
  private boolean looked;

  RapidsJoinReorder(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    Rule<LogicalPlan> rule = pluginRule();
    if (rule == null || plan.find(DeviceScans::isGpuDirectRelation).isEmpty()) {
      return plan;
    }
    Map<DataSourceV2Relation, LogicalPlan> standIns = new IdentityHashMap<>();
    Map<BaseRelation, DataSourceV2Relation> originals = new IdentityHashMap<>();
    LogicalPlan standing = (LogicalPlan) plan.transformUp(new PlanRewrite<LogicalPlan>() {
      @Override
      LogicalPlan rewrite(LogicalPlan p) {
        if (!DeviceScans.isGpuDirectRelation(p)) {
          return null;
        }
        return standIns.computeIfAbsent((DataSourceV2Relation) p, r -> {
          StandIn standIn = new StandIn(session.sqlContext(), r.schema(), fileBytes(r));
          originals.put(standIn, r);
          return logicalRelation(standIn, r);
        });
      }
    });
    LogicalPlan reordered = rule.apply(standing);
    if (reordered.fastEquals(standing)) {
      return plan;
    }
    return (LogicalPlan) reordered.transformUp(new PlanRewrite<LogicalPlan>() {
      @Override
      LogicalPlan rewrite(LogicalPlan p) {
        return p instanceof LogicalRelation l ? originals.get(l.relation()) : null;
      }
    });
  }

  /** The plugin's rule where its optimizer extension is in this session, or null. */
  private synchronized Rule<LogicalPlan> pluginRule() {
    if (!looked) {
      looked = true;
      String extensions = session.sparkContext().getConf().get(StaticSQLConf.SPARK_SESSION_EXTENSIONS().key(), "");
      if (extensions.contains(PLUGIN_EXTENSION) && RapidsPlugin.version().isPresent()) {
        try {
          @SuppressWarnings("unchecked")
          Rule<LogicalPlan> r = (Rule<LogicalPlan>) RapidsPlugin.sqlClass(PLUGIN_RULE).getConstructor().newInstance();
          pluginRule = r;
        } catch (ReflectiveOperationException | RuntimeException e) {
          LOG.warn("gpudirect: the RAPIDS Accelerator's join reordering ({}) does not load ({}): joins of gpudirect"
              + " tables keep the query's order", PLUGIN_RULE, e.toString());
        }
      }
    }
    return pluginRule;
  }

  /**
   * The size Spark's V1 file relation over the same files reports ({@code HadoopFsRelation}:
   * the files' bytes times the compression factor), which is the table's scan's estimate of
   * all its columns. Spark's own estimate of a V2 relation before its operators are pushed is
   * refused in its tests.
   */
  private static long fileBytes(DataSourceV2Relation r) {
    Scan scan = ((SupportsRead) r.table()).newScanBuilder(r.options()).build();
    return scan instanceof SupportsReportStatistics s ? s.estimateStatistics().sizeInBytes().orElse(Long.MAX_VALUE)
        : Long.MAX_VALUE;
  }

  /**
   * {@code LogicalRelation(standIn, r.output, None, false[, None])}: its constructor gained a
   * parameter in Spark 4, so it is found by its first four.
   */
  private static LogicalPlan logicalRelation(StandIn standIn, DataSourceV2Relation r) {
    try {
      for (Constructor<?> c : LogicalRelation.class.getConstructors()) {
        Class<?>[] types = c.getParameterTypes();
        if (types.length >= 4 && types[0] == BaseRelation.class && types[3] == boolean.class) {
          Object[] args = new Object[types.length];
          args[0] = standIn;
          args[1] = r.output();
          args[2] = Option.empty();
          args[3] = false;
          for (int i = 4; i < args.length; i++) {
            args[i] = Option.empty();
          }
          return (LogicalPlan) c.newInstance(args);
        }
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot make a LogicalRelation of this Spark: " + e, e);
    }
    throw new IllegalStateException("This Spark's LogicalRelation has no constructor (relation, output, table, streaming)");
  }

  /** A V1 relation of a gpudirect table's columns and size, only ever seen by the plugin's rule. */
  private static final class StandIn extends BaseRelation {
    private final SQLContext sqlContext;
    private final StructType schema;
    private final long sizeInBytes;

    StandIn(SQLContext sqlContext, StructType schema, long sizeInBytes) {
      this.sqlContext = sqlContext;
      this.schema = schema;
      this.sizeInBytes = sizeInBytes;
    }

    @Override
    public SQLContext sqlContext() {
      return sqlContext;
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public long sizeInBytes() {
      return sizeInBytes;
    }
  }
}
