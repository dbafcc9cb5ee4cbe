package io.gpudirect.spark.rapids;

import io.gpudirect.spark.DeviceScans;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Exists;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.collection.JavaConverters;

/**
 * {@code EXISTS (SELECT * FROM t WHERE ...)} over a gpudirect table reads only the columns its
 * conditions need, as over {@code spark.read.parquet}. A V2 scan's columns are pruned once, when
 * Spark pushes operators into it, from the plan above it; an EXISTS subquery's plan still says
 * {@code SELECT *} then, and its rewrite into a semi join, which alone shows what the join needs,
 * comes later. So Spark before 3.5.7 (SPARK-51831) read every column there: the RAPIDS
 * Accelerator's 3.5.3 fetched all 16 of TPC-H's lineitem in q4 (2.0 GB at SF 10 where its own
 * reader read 3 columns), and so in q21's two subqueries and q22's. Runs at the end of analysis:
 * an EXISTS subquery over a gpudirect table selects no column ({@code Project []}), which
 * changes no answer (EXISTS asks only whether there is a row), and the optimizer adds what its
 * correlated conditions need when it pulls them out of the subquery.
 */
final class ExistsSubqueryPruning extends Rule<LogicalPlan> {
  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return (LogicalPlan) plan.transformAllExpressions(new PlanRewrite<Expression>() {
      @Override
      Expression rewrite(Expression e) {
        if (!(e instanceof Exists exists) || exists.plan().find(DeviceScans::isGpuDirectRelation).isEmpty()
            || selectsNothing(exists.plan())) {
          return null;
        }
        return exists.withNewPlan(new Project(JavaConverters.asScalaBuffer(List.<NamedExpression>of()).toSeq(),
            exists.plan()));
      }
    });
  }

  /** Already pruned by this rule: an analysed plan may be analysed again inside a larger one. */
  private static boolean selectsNothing(LogicalPlan plan) {
    return plan instanceof Project p && p.projectList().isEmpty();
  }
}
