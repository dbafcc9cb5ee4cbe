package io.gpudirect.spark.tpch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TpchQueriesTest {
  @Test
  void allTwentyTwoComeFromSparksTestsJar() {
    List<TpchQueries.Query> all = TpchQueries.select("all");
    assertEquals(22, all.size());
    assertTrue(all.get(0).sql().contains("l_returnflag"), all.get(0).sql());
    assertTrue(all.get(0).ordered());
    assertFalse(TpchQueries.get(6).ordered()); // one row: sum(l_extendedprice * l_discount)
  }

  @Test
  void aSubsetByNumbersAndRanges() {
    assertEquals(List.of(1, 3, 18, 19, 20, 21, 22),
        TpchQueries.select("1, q3,18-22,3").stream().map(TpchQueries.Query::number).toList());
  }

  @Test
  void aQueryThatDoesNotExistIsNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TpchQueries.select("1,23"));
    assertEquals("TPC-H queries '1,23': '23' is not a query from 1 to 22 or a range of them such as 18-22", e.getMessage());
  }
}
