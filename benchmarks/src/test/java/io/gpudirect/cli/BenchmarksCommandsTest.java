package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.bench.BenchCommand;
import io.gpudirect.demo.DemoCommand;
import org.junit.jupiter.api.Test;

/** With this module on the classpath, bin/gpudirect runs its demo and bench, found through META-INF/services. */
class BenchmarksCommandsTest {
  @Test
  void demoAndBenchAreTheBenchmarksModulesOwn() {
    var commands = GpuDirectCli.commandLine().getSubcommands();
    assertEquals(DemoCommand.class, commands.get("demo").getCommand().getClass());
    assertEquals(BenchCommand.class, commands.get("bench").getCommand().getClass());
  }
}
