package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.testing.ChildProcess;
import io.gpudirect.testing.SparkJvmFlags;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * demo and bench as a user runs them, in a child JVM started in a directory of its own with its
 * output in files: they leave nothing in the caller's directory (Spark's spark-warehouse was),
 * draw no progress bar into a file, and cite no issue numbers. On the Spark 3.5 line only: demo
 * and bench ship in that build ({@code bin/gpudirect}); the connector's reads they run are tested
 * on Spark 4 by the connector's and integration-tests' own tests.
 */
@Tag("spark35-line")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CallersDirectoryTest {
  @TempDir Path caller;
  @TempDir Path output;

  @ParameterizedTest
  @ValueSource(strings = {"demo --rows 20000", "bench --duration 0.2 --rounds 1 --size 4m --arrow-size 1m"
      + " --spark-rows 20000 --join-rows 20000 --join-pairs 1 --sections latency,spark,joins"})
  void leavesNothingInTheCallersDirectoryAndNoBarOrIssueInItsOutput(String args) throws Exception {
    List<String> flags = new ArrayList<>(SparkJvmFlags.FLAGS);
    flags.add("-Xmx1g");
    Path out = output.resolve("out");
    Path err = output.resolve("err");
    Process p = ChildProcess.java(CallersDirectoryTest.class, flags, GpuDirectCli.class.getName(), args.split(" "))
        .directory(caller.toFile()).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(240, TimeUnit.SECONDS), args + " ended");
    String printed = Files.readString(out) + Files.readString(err);
    assertEquals(0, p.exitValue(), printed);
    try (Stream<Path> left = Files.list(caller)) {
      assertEquals(List.of(), left.toList(), "left in the caller's directory by " + args);
    }
    assertFalse(Files.readString(err).contains("\r"), "a progress bar drawn into a file:\n" + Files.readString(err));
    assertFalse(printed.matches("(?s).*\\b[Ii]ssue \\d.*"), "an issue number in what a user reads:\n" + printed);
  }
}
