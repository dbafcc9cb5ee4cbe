package io.gpudirect.arrow.cudf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.arrow.ArrowFormatException;
import io.gpudirect.testing.TestData;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host-side checks of the cuDF path, without a GPU: every fuzzer-found Arrow IPC file or
 * stream is refused, naming it, before a single body byte would be fetched to the device — or,
 * for the few that are valid Arrow after all (the corpus README allows it), planned to exactly
 * what Arrow Java reads.
 */
class CudfArrowIpcReaderTest {
  private static final Path MALFORMED = TestData.dir("malformed");

  static Stream<String> malformed() throws Exception {
    try (Stream<Path> s = Files.list(MALFORMED)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow") || n.endsWith(".arrows"))
          .sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void malformedInputIsRefusedBeforeAnyBodyIsFetchedOrReadCorrectly(String name) {
    boolean stream = name.endsWith(".arrows");
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      try (FileChannel channel = FileChannel.open(MALFORMED.resolve(name))) {
        CudfReadPlan plan;
        try {
          plan = CudfReadPlan.of(channel, channel.size(), name, stream);
        } catch (ArrowFormatException e) {
          assertTrue(e.getMessage().contains(name), e.getMessage());
          return;
        }
        assertEquals(reference(MALFORMED.resolve(name), stream), PlannedValues.rows(plan, channel),
            name + " was planned, so it must be read as Arrow Java reads it");
      }
    });
  }

  private static List<List<Object>> reference(Path file, boolean stream) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    try (RootAllocator allocator = new RootAllocator(); ArrowReader reader = CudfCases.reference(file, stream, allocator)) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        for (int r = 0; r < root.getRowCount(); r++) {
          List<Object> row = new ArrayList<>();
          for (FieldVector v : root.getFieldVectors()) {
            row.add(ReferenceValues.value(v, r, reader));
          }
          rows.add(row);
        }
      }
    }
    return rows;
  }
}
