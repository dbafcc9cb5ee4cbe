package io.gpudirect.spark.tpch;

import io.trino.tpch.TpchColumn;
import io.trino.tpch.TpchEntity;
import io.trino.tpch.TpchTable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.LocalDate;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's types for the generator's columns, as the TPC-H specification (clause 1.3) defines
 * them: identifiers BIGINT (SF 300 and above overflow an INT), integers INT, decimals
 * DECIMAL(15,2), dates DATE, text STRING. The generator gives decimals as doubles that hold a
 * whole number of cents, so the conversion to two decimal places is exact, and checked.
 */
final class TpchSchema {
  static final DataType DECIMAL = DataTypes.createDecimalType(15, 2);

  private TpchSchema() {}

  static <E extends TpchEntity> StructType of(TpchTable<E> table) {
    return new StructType(table.getColumns().stream()
        .map(c -> DataTypes.createStructField(c.getColumnName(), typeOf(c), false))
        .toArray(StructField[]::new));
  }

  static <E extends TpchEntity> Row row(TpchTable<E> table, E entity) {
    Object[] values = new Object[table.getColumns().size()];
    int i = 0;
    for (TpchColumn<E> c : table.getColumns()) {
      values[i++] = switch (c.getType().getBase()) {
        case IDENTIFIER -> c.getIdentifier(entity);
        case INTEGER -> c.getInteger(entity);
        // the generator's dates count days from 1970-01-01, as Spark's DATE does
        case DATE -> java.sql.Date.valueOf(LocalDate.ofEpochDay(c.getDate(entity)));
        // throws where the double is not a whole number of cents (never, for this generator)
        case DOUBLE -> BigDecimal.valueOf(c.getDouble(entity)).setScale(2, RoundingMode.UNNECESSARY);
        case VARCHAR -> c.getString(entity);
      };
    }
    return RowFactory.create(values);
  }

  private static DataType typeOf(TpchColumn<?> c) {
    return switch (c.getType().getBase()) {
      case IDENTIFIER -> DataTypes.LongType;
      case INTEGER -> DataTypes.IntegerType;
      case DATE -> DataTypes.DateType;
      case DOUBLE -> DECIMAL;
      case VARCHAR -> DataTypes.StringType;
    };
  }
}
