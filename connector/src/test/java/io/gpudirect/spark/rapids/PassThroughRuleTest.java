package io.gpudirect.spark.rapids;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** Which read schemas {@link PassThroughRule} hands over on the device, without the plugin. */
class PassThroughRuleTest {
  @Test
  void topLevelBinaryNullAndDecimalsAreHandedOverNestedBinaryAndDecimalsAreNot() {
    StructType flat = new StructType()
        .add("id", DataTypes.LongType)
        .add("bytes", DataTypes.BinaryType)
        .add("nothing", DataTypes.NullType)
        .add("price", new DecimalType(7, 2));
    assertNull(PassThroughRule.layoutRefusal(flat));

    String nestedBinary = PassThroughRule.layoutRefusal(
        new StructType().add("id", DataTypes.LongType).add("blobs", DataTypes.createArrayType(DataTypes.BinaryType)));
    assertTrue(nestedBinary != null && nestedBinary.contains("'blobs'") && nestedBinary.contains("nested binary"),
        String.valueOf(nestedBinary));

    String nestedDecimal = PassThroughRule.layoutRefusal(new StructType().add("s",
        new StructType().add("price", new DecimalType(7, 2))));
    assertTrue(nestedDecimal != null && nestedDecimal.contains("'s'"), String.valueOf(nestedDecimal));
  }
}
