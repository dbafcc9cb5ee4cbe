package io.gpudirect.spark.rapids;

import scala.Function1;
import scala.runtime.AbstractPartialFunction;

/**
 * A rule's rewrite of plan or expression nodes as the partial function Spark's {@code transform}
 * methods take: defined where {@link #rewrite} gives a replacement, which it must give the same
 * each time it is asked for one node.
 */
abstract class PlanRewrite<T> extends AbstractPartialFunction<T, T> {
  /** The node's replacement, or null to leave it. */
  abstract T rewrite(T node);

  @Override
  public boolean isDefinedAt(T node) {
    return rewrite(node) != null;
  }

  @Override
  public <A1 extends T, B1> B1 applyOrElse(A1 node, Function1<A1, B1> otherwise) {
    T replaced = rewrite(node);
    @SuppressWarnings("unchecked")
    B1 out = replaced != null ? (B1) replaced : otherwise.apply(node);
    return out;
  }
}
