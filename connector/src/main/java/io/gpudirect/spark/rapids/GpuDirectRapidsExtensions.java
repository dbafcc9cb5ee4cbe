package io.gpudirect.spark.rapids;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.internal.StaticSQLConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=io.gpudirect.spark.rapids.GpuDirectRapidsExtensions}: hands
 * {@code format("gpudirect")} batches to the RAPIDS Accelerator on the device
 * ({@link PassThroughRule}); without the plugin, or with a version not tested, that changes
 * nothing. It also plans gpudirect reads as the plugin's Spark plans its own: the columns of
 * EXISTS subqueries pruned ({@link ExistsSubqueryPruning}, which Spark before 3.5.7 does not do
 * for V2 scans), and joins reordered by the plugin's rule ({@link RapidsJoinReorder}, which takes
 * V1 file relations only).
 *
 * <p>Spark runs the columnar rules' post-transition halves in reverse order of registration,
 * and the plugin appends its own extension to {@code spark.sql.extensions}; so this one, named
 * there by the user, runs after the plugin's transitions, as it must. It is not registered
 * automatically: a session's rules are fixed when the session is made, before any scan of
 * ours exists; a scan that finds the plugin configured without this extension says so in
 * explain() instead.
 */
public final class GpuDirectRapidsExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  private static final Logger LOG = LoggerFactory.getLogger(GpuDirectRapidsExtensions.class);
  private static final String PLUGIN_EXTENSION = "com.nvidia.spark.rapids.SQLExecPlugin";

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectPostHocResolutionRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new ExistsSubqueryPruning();
      }
    });
    extensions.injectOptimizerRule(new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
      @Override
      public Rule<LogicalPlan> apply(SparkSession session) {
        return new RapidsJoinReorder(session);
      }
    });
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        warnIfAfterPlugin(session);
        return new PassThroughColumnarRule(session);
      }
    });
    return BoxedUnit.UNIT;
  }

  /** Listed after the plugin, the rule would run before its transitions and find nothing. */
  private static void warnIfAfterPlugin(SparkSession session) {
    String list = session.sparkContext().getConf().get(StaticSQLConf.SPARK_SESSION_EXTENSIONS().key(), "");
    int plugin = list.indexOf(PLUGIN_EXTENSION);
    int ours = list.indexOf(GpuDirectRapidsExtensions.class.getName());
    if (plugin >= 0 && ours > plugin) {
      LOG.warn("gpudirect: spark.sql.extensions lists {} after {}: list it first, or gpudirect's device"
          + " batches take the plugin's host-to-GPU copy", GpuDirectRapidsExtensions.class.getName(), PLUGIN_EXTENSION);
    }
  }

  /** The columnar rule whose post-transition half is {@link PassThroughRule}. */
  static final class PassThroughColumnarRule extends ColumnarRule {
    private final SparkSession session;

    PassThroughColumnarRule(SparkSession session) {
      this.session = session;
    }

    @Override
    public org.apache.spark.sql.catalyst.rules.Rule<org.apache.spark.sql.execution.SparkPlan> postColumnarTransitions() {
      return new PassThroughRule(session);
    }
  }
}
