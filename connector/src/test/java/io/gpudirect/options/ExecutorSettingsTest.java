package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gpudirect.GpuDirectException;
import io.gpudirect.gpu.GpuSettings;
import io.gpudirect.spark.LocalSessions;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Executor settings from a real local Spark's conf, over the JVM's {@code -Dgpudirect.X}. */
class ExecutorSettingsTest {
  private SparkSession spark;

  @AfterEach
  void stop() {
    LocalSessions.stop(spark, null);
    for (String name : ExecutorSettings.NAMES) {
      System.clearProperty("gpudirect." + name);
    }
  }

  @Test
  void withoutSparkTheJvmsPropertiesAreTakenInSparksNotation() {
    System.setProperty("gpudirect.pinnedChunks", "48");
    System.setProperty("gpudirect.deviceMemoryLimit", "8g");
    System.setProperty("gpudirect.prefetchFraction", "0.25");
    System.setProperty("gpudirect.hostCopyPinnedPoolBytes", "268435456");
    assertEquals(new GpuSettings(48, 8L << 30, 0.25), ExecutorSettings.gpu());
    assertEquals(256L << 20, ExecutorSettings.hostCopyPinnedPoolBytes());
    assertEquals(Long.MAX_VALUE, ExecutorSettings.arrowMemoryLimit());
  }

  @Test
  void theSparkConfWinsOverTheJvmAndReachesTheExecutors() {
    System.setProperty("gpudirect.pinnedChunks", "48");
    spark = LocalSessions.builder("executor-settings", 2)
        .config("spark.gpudirect.PinnedChunks", "96")
        .config("spark.gpudirect.deviceMemoryLimit", "8g")
        .config("spark.gpudirect.arrowMemoryLimit", "512m")
        .getOrCreate();
    assertEquals(new GpuSettings(96, 8L << 30, 0.125), ExecutorSettings.gpu());
    assertEquals(512L << 20, ExecutorSettings.arrowMemoryLimit());
    assertEquals(1L << 30, ExecutorSettings.hostCopyPinnedPoolBytes());
    List<Integer> inTasks = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(List.of(1, 2), 2).map(i -> ExecutorSettings.gpu().pinnedChunks()).collect();
    assertEquals(List.of(96, 96), inTasks);
  }

  @Test
  void aPropertyThatIsNoneIsRefusedNamingIt() {
    System.setProperty("gpudirect.prefetchFraction", "an eighth");
    assertEquals("-Dgpudirect.prefetchFraction=an eighth is refused: not a fraction such as 0.25",
        assertThrows(GpuDirectException.class, ExecutorSettings::gpu).getMessage());
  }

  @Test
  void aValueThatIsNoneIsRefusedNamingItsKey() {
    spark = LocalSessions.builder("executor-settings-refused", 1)
        .config("spark.gpudirect.pinnedChunks", "lots")
        .config("spark.gpudirect.hostCopyPinnedPoolBytes", "1 gig")
        .getOrCreate();
    assertEquals("spark.gpudirect.pinnedChunks=lots is refused: not a whole number of 4 MiB chunks",
        assertThrows(GpuDirectException.class, ExecutorSettings::gpu).getMessage());
    String bytes = assertThrows(GpuDirectException.class, ExecutorSettings::hostCopyPinnedPoolBytes).getMessage();
    assertEquals(true, bytes.startsWith("spark.gpudirect.hostCopyPinnedPoolBytes=1 gig is refused: "), bytes);
  }
}
