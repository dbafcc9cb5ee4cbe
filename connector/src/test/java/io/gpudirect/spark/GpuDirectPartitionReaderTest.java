package io.gpudirect.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.dataset.DataFile;
import io.gpudirect.dataset.DataFormat;
import io.gpudirect.protocol.FileVersion;
import io.gpudirect.spark.plan.ArrowSlice;
import io.gpudirect.spark.plan.GpuDirectPartition;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A slice's failure reaches the user naming its file once: wrapped only when it does not name it yet. */
class GpuDirectPartitionReaderTest {
  private static final String FILE = "gpudirect://storage:7337/data/part-0.arrow";

  private static GpuDirectPartitionReader<Object> failingWith(RuntimeException failure) {
    DataFile file = new DataFile(GpuDirectUri.parse(FILE), 1000, FileVersion.ANY, DataFormat.ARROW_FILE);
    GpuDirectPartition partition = new GpuDirectPartition(List.of(new ArrowSlice(file, 0, 1, 1000)), "storage");
    return new GpuDirectPartitionReader<>(partition, slice -> {
      throw failure;
    }, "tcp");
  }

  @Test
  void aFailureAboutTheSlicesFileReachesTheUserAsItIs() {
    ArrowFormatException truncated = new ArrowFormatException(FILE, "the file ends inside record batch 3");
    assertSame(truncated, assertThrows(ArrowFormatException.class, () -> failingWith(truncated).next()));
  }

  @Test
  void aFailureNamingNoFileIsWrappedNamingTheSlicesFile() {
    GpuDirectException lost = new GpuDirectException("connection to storage:7337 lost");
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> failingWith(lost).next());
    assertEquals("Cannot read " + FILE + ": " + lost, e.getMessage());
    assertEquals(FILE, e.file());
    assertSame(lost, e.getCause());
  }

  /**
   * The stream {@code part-0.arrows} is another file, though its name begins with this one's;
   * the reader once looked for the file's name in the message and passed this failure on as if
   * it were about {@code part-0.arrow}.
   */
  @Test
  void aFailureAboutAnotherFileWhoseNameBeginsWithThisOnesIsWrapped() {
    ArrowFormatException other = new ArrowFormatException(FILE + "s", "no ARROW1 magic");
    GpuDirectException e = assertThrows(GpuDirectException.class, () -> failingWith(other).next());
    assertTrue(e.getMessage().startsWith("Cannot read " + FILE + ": "), e.getMessage());
    assertEquals(FILE, e.file());
    assertSame(other, e.getCause());
  }
}
