package io.gpudirect.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/**
 * Every number of {@code gpudirect bench}, out of its range, refused before anything is written
 * or run, by a message naming the option and its range (before: {@code --size 0} said "Not a
 * positive size: '0'", naming no option, and some were not checked at all).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BenchOptionsTest {
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(delimiter = '|', value = {
      "--size        | 0     | --size must be a size from 1m to 1t",
      "--size        | 1x    | --size must be a size from 1m to 1t",
      "--arrow-size  | 100g  | --arrow-size must be a size from 1m to 64g",
      "--memory-size | -1    | --memory-size must be a size from 1m to 1t",
      "--rounds      | 0     | --rounds must be a whole number from 1 to 20, not 0",
      "--join-pairs  | 51    | --join-pairs must be a whole number from 1 to 50, not 51",
      "--spark-rows  | 0     | --spark-rows must be a whole number from 1 to 1000000000, not 0",
      "--join-rows   | -5    | --join-rows must be a whole number from 1 to 1000000000, not -5",
      "--iperf3-port | 70000 | --iperf3-port must be a whole number from 1 to 65535, not 70000",
      "--duration    | 0     | --duration must be a number of seconds above 0 and at most 600, not 0.0"})
  void aNumberOutOfRangeIsRefusedNamingTheOption(String option, String value, String message) {
    StringWriter err = new StringWriter();
    StringWriter failure = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand()).setErr(new PrintWriter(err, true));
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      failure.write(String.valueOf(e.getMessage()));
      return 1;
    });
    int exit = cli.execute(option, value, "--no-progress");
    assertTrue(exit != 0, option + " " + value + " was taken");
    String said = failure + err.toString();
    assertTrue(said.contains(message), said);
    assertEquals(-1, said.indexOf("Exception"), said);
  }
}
