package io.gpudirect.arrow;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.validate.ValidateVectorDataVisitor;

/**
 * Arrow's data validation (offsets ascending and inside their data, and so on), minus its
 * Arrow 12 bug: its fixed-size-list check asks the vector for an offset buffer, which a
 * fixed-size list has not, and throws. A fixed-size list has no data of its own to check
 * (its buffer-level validation already checks the elements' length), so only its
 * elements are visited.
 *
 * <p>Fixed-width values are not checked here, as in Arrow 12: Arrow 18 (Spark 4) checks
 * decimal precision in this visit, and {@link LoadedBatchCheck} already does that right
 * after, naming the row and value, on both Spark lines.
 */
final class FullDataValidation extends ValidateVectorDataVisitor {
  @Override
  public Void visit(FixedSizeListVector vector, Void value) {
    vector.getDataVector().accept(this, null);
    return null;
  }

  @Override
  public Void visit(BaseFixedWidthVector vector, Void value) {
    return null;
  }
}
