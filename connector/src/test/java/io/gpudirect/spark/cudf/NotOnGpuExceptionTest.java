package io.gpudirect.spark.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/**
 * With output=auto, the host fallback is logged once per reason, keyed by {@code reason()}: a
 * reason that holds for a whole file names the file in the message only.
 */
class NotOnGpuExceptionTest {
  @Test
  void aReasonForAWholeFileIsTheSameForEveryFileThatTheMessageNames() {
    String reason = "its dates and timestamps need the LEGACY calendar rebase, which only the host reader does";
    NotOnGpuException a = new NotOnGpuException("gpudirect://s:7337/a.parquet", reason);
    NotOnGpuException b = new NotOnGpuException("gpudirect://s:7337/b.parquet", reason);
    assertEquals(a.reason(), b.reason());
    assertFalse(a.reason().contains("a.parquet"));
    assertEquals("Cannot read gpudirect://s:7337/a.parquet on the GPU: " + reason, a.getMessage());
    assertEquals("gpudirect://s:7337/a.parquet", a.file());
  }

  @Test
  void aReasonAboutSomeColumnsNamesNoFile() {
    NotOnGpuException e = new NotOnGpuException("column 'c' matches both 'C' and 'c'");
    assertEquals(e.getMessage(), e.reason());
    assertNull(e.file());
  }
}
