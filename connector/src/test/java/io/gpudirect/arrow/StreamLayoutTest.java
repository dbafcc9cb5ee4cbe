package io.gpudirect.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.TestData;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The stream scan that lets cuDF fetch record-batch bodies alone finds what Arrow Java finds. */
class StreamLayoutTest {
  private static final Path TESTDATA = TestData.root();

  static Stream<String> streams() throws Exception {
    try (Stream<Path> s = Files.list(TESTDATA.resolve("arrow"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".stream")).sorted().toList().stream();
    }
  }

  static Stream<String> malformed() throws Exception {
    try (Stream<Path> s = Files.list(TESTDATA.resolve("malformed"))) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrows")).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("streams")
  void findsTheSchemaAndEveryRecordBatch(String name) throws Exception {
    Path file = TESTDATA.resolve("arrow").resolve(name);
    try (FileChannel channel = FileChannel.open(file);
         RootAllocator allocator = new RootAllocator();
         ArrowStreamReader reference = new ArrowStreamReader(FileChannel.open(file), allocator)) {
      StreamLayout layout = StreamLayout.scan(channel, channel.size(), name);
      assertEquals(reference.getVectorSchemaRoot().getSchema(), layout.schema());
      int batches = 0;
      while (reference.loadNextBatch()) {
        batches++;
      }
      assertEquals(batches, layout.recordBatches().size(), "record batches of " + name);
    } catch (ArrowFormatException dictionaries) {
      assertTrue(dictionaries.getMessage().contains("dictionary"), dictionaries.getMessage());
    }
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void fuzzerFoundStreamsEndInAResultOrAnErrorNamingThem(String name) {
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      try (FileChannel channel = FileChannel.open(TESTDATA.resolve("malformed").resolve(name))) {
        StreamLayout.scan(channel, channel.size(), name);
      } catch (ArrowFormatException e) {
        assertTrue(e.getMessage().contains(name), e.getMessage());
      }
    });
  }
}
