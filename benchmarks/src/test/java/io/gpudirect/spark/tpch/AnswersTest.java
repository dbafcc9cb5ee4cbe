package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.Test;

class AnswersTest {
  private static final Row A = RowFactory.create("A", new BigDecimal("10.25"), 1.0);
  private static final Row B = RowFactory.create("B", new BigDecimal("3.50"), 2.0);

  @Test
  void decimalsMustBeExactScaleIncluded() {
    assertTrue(Answers.difference(List.of(A), List.of(RowFactory.create("A", new BigDecimal("10.26"), 1.0)), true).isPresent());
    assertTrue(Answers.difference(List.of(A), List.of(RowFactory.create("A", new BigDecimal("10.250"), 1.0)), true).isPresent());
    assertEquals(Optional.empty(), Answers.difference(List.of(A), List.of(RowFactory.create("A", new BigDecimal("10.25"), 1.0)), true));
  }

  @Test
  void doublesMayDifferInTheirLastDigits() {
    assertEquals(Optional.empty(), Answers.difference(List.of(A), List.of(RowFactory.create("A", new BigDecimal("10.25"), 1.0 + 1e-13)), true));
    assertTrue(Answers.difference(List.of(A), List.of(RowFactory.create("A", new BigDecimal("10.25"), 1.0 + 1e-6)), true).isPresent());
  }

  @Test
  void orderCountsOnlyWhereTheQueryNamesOne() {
    assertEquals(Optional.empty(), Answers.difference(List.of(A, B), List.of(B, A), false));
    assertTrue(Answers.difference(List.of(A, B), List.of(B, A), true).orElseThrow().startsWith("row 0, column 0: B"));
  }

  @Test
  void aMissingRowIsADifference() {
    assertEquals(Optional.of("1 rows where the reference has 2"), Answers.difference(List.of(A, B), List.of(A), false));
  }
}
