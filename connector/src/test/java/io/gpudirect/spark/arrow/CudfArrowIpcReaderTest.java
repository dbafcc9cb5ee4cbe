package io.gpudirect.spark.arrow;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host-side checks of the cuDF path, without a GPU: every fuzzer-found Arrow IPC file or
 * stream is refused, naming it, before a single body byte would be fetched to the device.
 */
class CudfArrowIpcReaderTest {
  private static final Path MALFORMED = Path.of(System.getProperty("gpudirect.testdata", "../../shared/testdata"), "malformed");

  static Stream<String> malformed() throws Exception {
    try (Stream<Path> s = Files.list(MALFORMED)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow") || n.endsWith(".arrows"))
          .sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("malformed")
  void malformedInputIsRefusedBeforeAnyBodyIsFetched(String name) {
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      try (FileChannel channel = FileChannel.open(MALFORMED.resolve(name))) {
        CudfArrowIpcReader reader = new CudfArrowIpcReader(channel, channel.size(), name, name.endsWith(".arrows"),
            (offset, dst) -> fail("a body of " + name + " was fetched to the device"));
        ArrowFormatException e = assertThrows(ArrowFormatException.class, () -> reader.read());
        assertTrue(e.getMessage().contains(name), e.getMessage());
      }
    });
  }
}
