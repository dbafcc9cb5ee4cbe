package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import io.gpudirect.testing.TestData;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzzer-found Arrow IPC files and streams: each either reads as data that passes Arrow's
 * full validation and every value of which Spark's getters can read, or fails within
 * seconds with a {@link GpuDirectException} naming the file. Never a hang, crash or leak.
 */
class MalformedArrowTest {
  static final Path MALFORMED = TestData.dir("malformed");

  private BufferAllocator allocator;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator(1L << 30);
  }

  @AfterEach
  void noLeaks() {
    assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory left allocated");
    allocator.close();
  }

  static Stream<String> files() throws IOException {
    try (Stream<Path> files = Files.list(MALFORMED)) {
      return files.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".arrow") || n.endsWith(".arrows"))
          .sorted()
          .toList()
          .stream();
    }
  }

  @ParameterizedTest
  @MethodSource("files")
  void failsCleanlyOrReadsValidData(String name) {
    String displayName = "gpudirect://127.0.0.1:7337/malformed/" + name;
    boolean stream = name.endsWith(".arrows");
    String outcome = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
      try (ArrowIpcFile file = ArrowIpcFile.open(FileChannel.open(MALFORMED.resolve(name)), displayName, stream,
          allocator)) {
        int batches = 0;
        long rows = 0;
        try (ArrowBatchReader reader = file.readBatches(0, stream ? Integer.MAX_VALUE : file.recordBatchCount(),
            file.sparkSchema())) {
          while (reader.next()) {
            batches++;
            rows += SparkValues.rows(reader.get(), file.sparkSchema()).size();
          }
        }
        return "read " + batches + " batches, " + rows + " rows of " + file.sparkSchema().simpleString();
      } catch (GpuDirectException e) {
        assertTrue(e.getMessage().contains(displayName), "message does not name the file: " + e.getMessage());
        return "failed: " + e.getMessage();
      }
    });
    System.out.println(name + ": " + outcome);
  }
}
