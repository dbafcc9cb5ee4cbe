package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The command line's own surface: what --help lists, and demo and bench where their module is absent. */
class GpuDirectCliTest {
  @Test
  void helpListsEveryCommandDemoAndBenchIncluded() {
    String usage = GpuDirectCli.commandLine().getUsageMessage();
    for (String command : new String[] {"demo", "server", "ls", "cat", "doctor", "bench"}) {
      assertTrue(usage.contains("\n  " + command + " "), command + " in:\n" + usage);
    }
  }

  @Test
  void demoAndBenchWithoutTheBenchmarksModuleSayHowToRunThem() {
    for (String command : new String[] {"demo", "bench"}) {
      StringWriter err = new StringWriter();
      int code = GpuDirectCli.commandLine().setErr(new PrintWriter(err)).execute(command);
      assertEquals(1, code);
      assertTrue(err.toString().contains("bin/gpudirect " + command), err.toString());
    }
  }
}
