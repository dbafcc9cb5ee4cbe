package io.gpudirect.arrow;

import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;
import org.apache.arrow.vector.validate.ValidateVectorTypeVisitor;

/**
 * Arrow's structural validation ({@code ValueVectorUtility.validate}: types, then buffers),
 * minus its Arrow 12 bug: a map vector is a list vector to the type check, which then finds a
 * map type where it expects a list and refuses every map column. A map is checked as a map here,
 * and its entries as Arrow checks them.
 */
final class StructuralValidation extends ValidateVectorTypeVisitor {
  static void validate(ValueVector vector) {
    vector.accept(new StructuralValidation(), null);
    vector.accept(new ValidateVectorBufferVisitor(), null);
  }

  @Override
  public Void visit(ListVector vector, Void value) {
    if (!(vector instanceof MapVector)) {
      return super.visit(vector, value);
    }
    if (!(vector.getField().getType() instanceof ArrowType.Map)) {
      throw new IllegalArgumentException("map column '" + vector.getName() + "' has type "
          + vector.getField().getType());
    }
    if (vector.getValueCount() < 0 || vector.getNullCount() < 0 || vector.getNullCount() > vector.getValueCount()) {
      throw new IllegalArgumentException("map column '" + vector.getName() + "' has " + vector.getValueCount()
          + " values with " + vector.getNullCount() + " nulls");
    }
    vector.getDataVector().accept(this, null);
    return null;
  }
}
